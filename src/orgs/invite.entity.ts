import { Column, Entity, Index } from 'typeorm';
import type { Capability } from '../auth/capabilities.js';
import { TIMESTAMP } from '../lib/columns.js';
import { OrgOwned } from './org-owned.js';

/**
 * An invitation of a person, by email, to become a member of an organization with the
 * given capabilities. One per email within an organization: an expired invite is replaced
 * by a new one, a pending one is a conflict (see invites.service.ts).
 */
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
