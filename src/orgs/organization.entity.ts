import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';

import { bigintTransformer, TIMESTAMP } from '../lib/columns.js';

/** An ordinary customer, a reseller (`isReseller`), or a reseller's tenant (`parentId`), paid for by its parent. */
@Entity('organizations')
@Index('organizations_parent_created_idx', ['parentId', 'createdAt', 'id'])
@Index('organizations_parent_external_ref_idx', ['parentId', 'externalRef', 'createdAt', 'id'], { where: 'external_ref IS NOT NULL' })
export class Organization {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'varchar', length: 64, default: 'UTC' })
  timezone!: string;

  @Column({ type: 'varchar', length: 32, nullable: true })
  industry!: string | null;

  @Column({ name: 'external_ref', type: 'varchar', length: 200, nullable: true })
  externalRef!: string | null;

  @Column({ name: 'parent_id', type: 'varchar', length: 40, nullable: true })
  parentId!: string | null;

  @ManyToOne(() => Organization, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'parent_id' })
  parent?: Relation<Organization>;

  @Column({ name: 'is_reseller', type: 'boolean', default: false })
  isReseller!: boolean;

  @Column({ name: 'tenant_limit', type: 'integer', default: 10 })
  tenantLimit!: number;

  /** Outbound limits; for a reseller they are also the ceiling of its tenants' limits. */
  @Column({ name: 'max_concurrent_calls', type: 'integer', default: 10 })
  maxConcurrentCalls!: number;

  @Column({ name: 'max_calls_per_hour', type: 'integer', default: 600 })
  maxCallsPerHour!: number;

  @Column({ name: 'rate_per_minute_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  ratePerMinuteMicros!: bigint;

  @Column({ name: 'rate_per_text_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  ratePerTextMicros!: bigint;

  /** A tenant's resale prices, set by its reseller; null: the reseller's own rates (`resalePrices`). */
  @Column({ name: 'resale_per_minute_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  resalePerMinuteMicros!: bigint | null;

  @Column({ name: 'resale_per_text_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  resalePerTextMicros!: bigint | null;

  /** A tenant's monthly spend limit, set by its reseller (null: none); the rule is `src/tenants/spend-limit.ts`'s. */
  @Column({ name: 'monthly_spend_limit_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  monthlySpendLimitMicros!: bigint | null;

  @Column({ type: 'char', length: 3, default: 'USD' })
  currency!: string;

  /** The sum of the ledger, kept in every entry's transaction so a balance read never scans it; the ledger stays the truth. */
  @Column({ name: 'balance_micros', type: 'bigint', default: 0, transformer: bigintTransformer })
  balanceMicros!: bigint;

  /** Below it, `balance.low` is sent (null: never); the rule is `LedgerRepository.append`'s. */
  @Column({ name: 'low_balance_threshold_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  lowBalanceThresholdMicros!: bigint | null;

  /** `balance.low` was sent and the balance has stayed below the threshold since. */
  @Column({ name: 'low_balance_notified', type: 'boolean', default: false })
  lowBalanceNotified!: boolean;

  @Column({ type: 'boolean', default: false })
  disabled!: boolean;

  /** When a tenant was last disabled: its calls in progress are charged up to this moment. */
  @Column({ name: 'disabled_at', ...TIMESTAMP, nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'sms_sender', type: 'varchar', length: 16, nullable: true })
  smsSender!: string | null;

  /** `simulator` is the one provider today. */
  @Column({ name: 'carrier_provider', type: 'varchar', length: 32, default: 'simulator' })
  carrierProvider!: string;

  @Column({ name: 'booking_page_enabled', type: 'boolean', default: true })
  bookingPageEnabled!: boolean;

  @Column({ name: 'booking_page_headline', type: 'varchar', length: 200, nullable: true })
  bookingPageHeadline!: string | null;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}

/** The one test in code of "is a tenant" (SQL: `parent_id IS NOT NULL`): no login, balance or booking page of its own. */
export const isTenant = (org: Pick<Organization, 'parentId'>): boolean => org.parentId !== null;
