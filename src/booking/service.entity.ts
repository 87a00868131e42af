import { Column, Entity, Index } from 'typeorm';
import { OrgOwned } from '../orgs/org-owned.js';

/** Something customers can book (a cleaning, a haircut, an oil change). */
@Entity('services')
@Index('services_org_created_idx', ['orgId', 'createdAt', 'id'])
export class Service extends OrgOwned {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'text', default: '' })
  description!: string;

  @Column({ name: 'duration_minutes', type: 'integer', default: 30 })
  durationMinutes!: number;
}
