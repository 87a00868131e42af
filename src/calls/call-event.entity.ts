import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/** Exactly the keys `call_event_payload()` builds (test/calls/calls.test.ts holds the two together). */
export const CALL_EVENT_FIELDS = [
  'event',
  'call_id',
  'org_id',
  'status',
  'sequence',
  'occurred_at',
  'phone_number',
  'direction',
  'outcome',
  'end_reason',
  'duration_seconds',
  'started_at',
  'ended_at',
  'agent_id',
  'contact_id',
  'campaign_id',
] as const;
export type CallEventField = (typeof CALL_EVENT_FIELDS)[number];

/**
 * Every event, call and operational (call_id and sequence null): the relay's outbox and the feed's source,
 * written in its cause's transaction. Partitioned by day of `created_at`, hence in the primary key;
 * a call's sequence is unique by construction (its `last_sequence` is incremented), not by index.
 */
@Entity('call_events')
@Index('call_events_call_sequence_idx', ['callId', 'sequence'])
@Index('call_events_org_created_idx', ['orgId', 'createdAt', 'id'])
@Index('call_events_account_created_idx', ['accountId', 'createdAt', 'id'])
@Index('call_events_unrelayed_idx', ['createdAt'], { where: 'relayed_at IS NULL' })
export class CallEvent {
  @PrimaryColumn({ type: 'varchar', length: 40, primaryKeyConstraintName: 'call_events_pkey' })
  id!: string;

  /** Null for an operational event. */
  @Column({ name: 'call_id', type: 'varchar', length: 40, nullable: true })
  callId!: string | null;

  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  /**
   * The account the event belongs to: the reseller's id for a tenant's event, else `orgId` (billing's
   * payer, `payerIdSql`). A reseller's feed and reseller-wide endpoints read its tenants' events by it.
   */
  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId!: string;

  /** The call's event number (1, 2, ...); null for an operational event. */
  @Column({ type: 'integer', nullable: true })
  sequence!: number | null;

  @Column({ type: 'varchar', length: 32 })
  event!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, string | number | null>;

  @Column({ name: 'occurred_at', ...TIMESTAMP })
  occurredAt!: Date;

  /** The partition key of every history table. */
  @PrimaryColumn({ name: 'created_at', ...TIMESTAMP, default: () => 'now()', primaryKeyConstraintName: 'call_events_pkey' })
  createdAt!: Date;

  @Column({ name: 'relayed_at', ...TIMESTAMP, nullable: true })
  relayedAt!: Date | null;

  /** Its call's `trace_parent` (see Call): the relay and the deliveries continue the call's trace from it. */
  @Column({ name: 'trace_parent', type: 'varchar', length: 55, nullable: true })
  traceParent!: string | null;
}
