import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Organization } from '../orgs/organization.entity.js';
import { bigintTransformer, TIMESTAMP } from '../lib/columns.js';

export type LedgerKind = 'adjustment' | 'call' | 'text';

/** Append-only; `reference` makes a charge idempotent: a call is charged once even if its job runs twice. */
@Entity('ledger_entries')
@Index('ledger_entries_org_created_idx', ['orgId', 'createdAt', 'id'])
@Index('ledger_entries_subject_created_idx', ['subjectOrgId', 'createdAt'])
export class LedgerEntry {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  @ManyToOne(() => Organization, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'org_id' })
  org?: Relation<Organization>;

  @Column({ name: 'subject_org_id', type: 'varchar', length: 40 })
  subjectOrgId!: string;

  @ManyToOne(() => Organization, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'subject_org_id' })
  subjectOrg?: Relation<Organization>;

  @Column({ type: 'varchar', length: 16 })
  kind!: LedgerKind;

  /** Signed: credits are positive, charges negative. */
  @Column({ name: 'amount_micros', type: 'bigint', transformer: bigintTransformer })
  amountMicros!: bigint;

  @Index('ledger_entries_reference_key', { unique: true })
  @Column({ type: 'varchar', length: 120, nullable: true })
  reference!: string | null;

  @Column({ type: 'varchar', length: 200, default: '' })
  description!: string;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}
