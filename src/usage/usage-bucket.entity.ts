import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintTransformer, TIMESTAMP } from '../lib/columns.js';

/**
 * One organization's usage in one UTC hour, rolled up by the `usage` worker from the ledger, calls and texts.
 * Reads sum an organization's hours from `usage_buckets_org_hour_sums_idx`, (org_id, hour) holding every sum
 * too (`INCLUDE`, which TypeORM cannot write: the migration makes it, and synchronization leaves it alone).
 */
@Entity('usage_buckets')
@Index('usage_buckets_org_hour_sums_idx', { synchronize: false })
export class UsageBucket {
  @PrimaryColumn({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  @PrimaryColumn({ name: 'hour', ...TIMESTAMP })
  hour!: Date;

  @Column({ name: 'completed_calls', type: 'integer', default: 0 })
  completedCalls!: number;

  @Column({ name: 'talk_time_seconds', type: 'bigint', default: 0, transformer: bigintTransformer })
  talkTimeSeconds!: bigint;

  @Column({ name: 'call_charges_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  callChargesMicros!: bigint;

  @Column({ name: 'other_charges_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  otherChargesMicros!: bigint;

  /** What the tenant owes at its resale prices for the calls that ended in the hour, in micros. */
  @Column({ name: 'billable_calls_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  billableCallsMicros!: bigint;

  @Column({ name: 'billable_other_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  billableOtherMicros!: bigint;
}
