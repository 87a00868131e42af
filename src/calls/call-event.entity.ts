import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/**
 * The fields of every event body (SPEC.md §6.1), exactly the keys the database function
 * `call_event_payload()` (VoiceOrganization migration) builds; test/calls/calls.test.ts
 * holds the two to each other. Webhook endpoints rename these with `field_aliases`.
 */
export const CALL_EVENT_FIELDS = [
  'event', 'call_id', 'org_id', 'status', 'sequence', 'occurred_at', 'phone_number', 'direction', 'outcome',
  'end_reason', 'duration_seconds', 'started_at', 'ended_at', 'agent_id', 'contact_id', 'campaign_id',
] as const;
export type CallEventField = (typeof CALL_EVENT_FIELDS)[number];

/**
 * Every event (the name is historical: see docs/decisions.md): the outbox the webhook relay
 * delivers from, and the source of the events feed. A call lifecycle event is written in the
 * same transaction as the status change that caused it, with every field of SPEC.md §6.1 in
 * `payload`; an operational event (src/events/) by its producer in the transaction of its own
 * change, with no call (`call_id` and `sequence` null). `payload` is exactly the body a delivery
 * carries before an endpoint's customization. Partitioned by day of `created_at` (see the
 * HistoryPartitions migration), which is why it belongs to the primary key; a call's sequence
 * is unique by construction (the statement that writes an event increments its call's
 * `last_sequence`), not by an index.
 */
@Entity('call_events')
@Index('call_events_call_sequence_idx', ['callId', 'sequence'])
@Index('call_events_org_created_idx', ['orgId', 'createdAt', 'id'])
/** The relay's outbox: events not relayed yet, oldest first. */
@Index('call_events_unrelayed_idx', ['createdAt'], { where: 'relayed_at IS NULL' })
export class CallEvent {
  @PrimaryColumn({ type: 'varchar', length: 40, primaryKeyConstraintName: 'call_events_pkey' })
  id!: string;

  /** Null for an operational event. */
  @Column({ name: 'call_id', type: 'varchar', length: 40, nullable: true })
  callId!: string | null;

  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  /** The call's event number (1, 2, ...); null for an operational event. */
  @Column({ type: 'integer', nullable: true })
  sequence!: number | null;

  @Column({ type: 'varchar', length: 32 })
  event!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, string | number | null>;

  @Column({ name: 'occurred_at', ...TIMESTAMP })
  occurredAt!: Date;

  /** The partition key of every history table (its deliveries and their attempts carry it). */
  @PrimaryColumn({ name: 'created_at', ...TIMESTAMP, default: () => 'now()', primaryKeyConstraintName: 'call_events_pkey' })
  createdAt!: Date;

  /** Set once the relay has fanned the event out to webhook deliveries. */
  @Column({ name: 'relayed_at', ...TIMESTAMP, nullable: true })
  relayedAt!: Date | null;
}
