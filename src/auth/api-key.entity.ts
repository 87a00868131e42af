import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Organization } from '../orgs/organization.entity.js';
import { Member } from '../orgs/member.entity.js';
import { TIMESTAMP } from '../lib/columns.js';
import type { Capability } from './capabilities.js';

/** An API key. Only its SHA-256 hash is stored; the raw key is shown once, at creation. */
@Entity('api_keys')
@Index('api_keys_org_created_idx', ['orgId', 'createdAt', 'id'])
export class ApiKey {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  @ManyToOne(() => Organization, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'org_id' })
  org?: Relation<Organization>;

  @Column({ name: 'member_id', type: 'varchar', length: 40 })
  memberId!: string;

  @ManyToOne(() => Member, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'member_id' })
  member?: Relation<Member>;

  @Column({ type: 'varchar', length: 200 })
  label!: string;

  @Column({ type: 'text', array: true })
  permissions!: Capability[];

  /** CONTRACT.md §5: the only tenants the key may act in; null for a key of the whole account. */
  @Column({ name: 'tenant_ids', type: 'text', array: true, nullable: true })
  tenantIds!: string[] | null;

  @Column({ type: 'char', length: 12 })
  prefix!: string;

  @Index('api_keys_hash_key', { unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64, select: false })
  keyHash!: string;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;

  @Column({ name: 'last_used_at', ...TIMESTAMP, nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'revoked_at', ...TIMESTAMP, nullable: true })
  revokedAt!: Date | null;
}
