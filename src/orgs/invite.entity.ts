import { Column, Entity, Index } from 'typeorm';
import type { Capability } from '../auth/capabilities.js';
import { TIMESTAMP } from '../lib/columns.js';
import { OrgOwned } from './org-owned.js';

/** One per email within an organization: an expired invite is replaced, a pending one conflicts. */
@Entity('invites')
@Index('invites_org_created_idx', ['orgId', 'createdAt', 'id'])
@Index('invites_org_email_key', ['orgId', 'email'], { unique: true })
export class Invite extends OrgOwned {
  /** Stored lower-cased, as members' emails are. */
  @Column({ type: 'varchar', length: 254 })
  email!: string;

  @Column({ type: 'text', array: true })
  capabilities!: Capability[];

  @Column({ name: 'expires_at', ...TIMESTAMP })
  expiresAt!: Date;
}
