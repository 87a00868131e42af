import { Column, Entity, Index } from 'typeorm';
import { OrgOwned } from '../orgs/org-owned.js';

/** A voice agent: what answers and places the organization's calls. */
@Entity('agents')
@Index('agents_org_created_idx', ['orgId', 'createdAt', 'id'])
export class Agent extends OrgOwned {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'varchar', length: 32, default: 'appointment' })
  kind!: string;

  @Column({ type: 'text', default: '' })
  greeting!: string;

  @Column({ type: 'varchar', length: 64, default: 'default' })
  voice!: string;

  @Column({ type: 'text', default: '' })
  prompt!: string;
}
