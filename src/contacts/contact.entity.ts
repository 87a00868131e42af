import { Column, Entity, Index } from 'typeorm';
import { OrgOwned } from '../orgs/org-owned.js';

/** Someone the organization calls; one contact per phone number within an organization. */
@Entity('contacts')
@Index('contacts_org_created_idx', ['orgId', 'createdAt', 'id'])
@Index('contacts_org_phone_key', ['orgId', 'phoneNumber'], { unique: true })
export class Contact extends OrgOwned {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  /** E.164. */
  @Column({ name: 'phone_number', type: 'varchar', length: 16 })
  phoneNumber!: string;

  @Column({ type: 'varchar', length: 254, nullable: true })
  email!: string | null;

  @Column({ type: 'jsonb', default: {} })
  metadata!: Record<string, unknown>;
}
