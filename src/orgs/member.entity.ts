import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Organization } from './organization.entity.js';
import { TIMESTAMP } from '../lib/columns.js';
import type { Capability } from '../auth/capabilities.js';

/** A person in an organization, with capabilities and optionally a password to sign in. */
@Entity('members')
export class Member {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Index('members_org_idx')
  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  @ManyToOne(() => Organization, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'org_id' })
  org?: Relation<Organization>;

  /** Lower-cased, unique service-wide (sign-in is by email alone); null for an operator-created owner. */
  @Index('members_email_key', { unique: true })
  @Column({ type: 'varchar', length: 254, nullable: true })
  email!: string | null;

  @Column({ type: 'text', array: true })
  capabilities!: Capability[];

  /** scrypt hash (see auth/passwords.ts); never selected unless asked for. */
  @Column({ name: 'password_hash', type: 'text', nullable: true, select: false })
  passwordHash!: string | null;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}
