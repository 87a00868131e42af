import { Column, Entity, Index } from 'typeorm';
import { OrgOwned } from '../orgs/org-owned.js';

/** A place where the organization serves its customers. */
@Entity('locations')
@Index('locations_org_created_idx', ['orgId', 'createdAt', 'id'])
export class Location extends OrgOwned {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'text', default: '' })
  address!: string;

  /** A tenant gets one at creation. */
  @Column({ name: 'is_main', type: 'boolean', default: false })
  isMain!: boolean;
}
