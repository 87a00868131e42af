import { Column, Entity, Index } from 'typeorm';
import { OrgOwnedRow } from '../orgs/org-owned.js';

/** A number the organization must never call; entries are added and removed, never changed (no `updated_at`). */
@Entity('do_not_call_entries')
@Index('do_not_call_entries_org_created_idx', ['orgId', 'createdAt', 'id'])
@Index('do_not_call_entries_org_phone_key', ['orgId', 'phoneNumber'], { unique: true })
export class DoNotCallEntry extends OrgOwnedRow {
  /** E.164. */
  @Column({ name: 'phone_number', type: 'varchar', length: 16 })
  phoneNumber!: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  reason!: string | null;
}
