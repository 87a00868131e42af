import { Column, Entity, Index } from 'typeorm';
import { bigintTransformer, TIMESTAMP } from '../lib/columns.js';
import { OrgOwned } from '../orgs/org-owned.js';

export const TERMINAL_STATUSES = ['completed', 'no_answer', 'busy', 'failed', 'canceled'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export const CALL_STATUSES = ['queued', 'ringing', 'in_progress', ...TERMINAL_STATUSES] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export type Outcome = 'positive' | 'neutral' | 'negative' | 'voicemail' | 'unreachable';
/**
 * A terminal status, or why we ended it (`tenant_disabled`; never dialed: `do_not_call`, a listed number,
 * `spend_limit_reached`, its tenant's monthly spend limit reached).
 */
export const END_REASONS = ['completed', 'no_answer', 'busy', 'failed', 'canceled', 'tenant_disabled', 'do_not_call', 'spend_limit_reached'] as const;
export type EndReason = (typeof END_REASONS)[number];
export type Direction = 'outbound' | 'inbound';

/** What the simulated carrier does with the call (CONTRACT.md "Calls"). */
export interface SimulateScript {
  answer: true | false | 'busy';
  duration_seconds: number;
  outcome: Outcome;
}

/** Every status change also writes a CallEvent. */
@Entity('calls')
@Index('calls_org_created_idx', ['orgId', 'createdAt', 'id'])
@Index('calls_payer_ended_idx', ['payerOrgId', 'endedAt'])
/** The unfinished calls, for the sweeper (no index names `status`: see the CallsStatusInPlace migration). */
@Index('calls_open_idx', ['createdAt'], { where: 'ended_at IS NULL' })
export class Call extends OrgOwned {
  @Column({ name: 'payer_org_id', type: 'varchar', length: 40 })
  payerOrgId!: string;

  @Column({ name: 'agent_id', type: 'varchar', length: 40 })
  agentId!: string;

  @Column({ name: 'contact_id', type: 'varchar', length: 40, nullable: true })
  contactId!: string | null;

  @Index('calls_campaign_idx')
  @Column({ name: 'campaign_id', type: 'varchar', length: 40, nullable: true })
  campaignId!: string | null;

  @Column({ type: 'varchar', length: 8 })
  direction!: Direction;

  @Column({ type: 'varchar', length: 16 })
  status!: CallStatus;

  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome!: Outcome | null;

  @Column({ name: 'end_reason', type: 'varchar', length: 32, nullable: true })
  endReason!: EndReason | null;

  /** The other party's number (E.164): the contact for outbound, the caller for inbound. */
  @Column({ name: 'phone_number', type: 'varchar', length: 16 })
  phoneNumber!: string;

  @Column({ name: 'our_number', type: 'varchar', length: 16, nullable: true })
  ourNumber!: string | null;

  @Column({ type: 'jsonb' })
  simulate!: SimulateScript;

  @Column({ name: 'last_sequence', type: 'integer', default: 0 })
  lastSequence!: number;

  /** When the engine handed it to the carrier (it then holds a concurrency slot). */
  @Column({ name: 'dialed_at', ...TIMESTAMP, nullable: true })
  dialedAt!: Date | null;

  @Column({ name: 'started_at', ...TIMESTAMP, nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'ended_at', ...TIMESTAMP, nullable: true })
  endedAt!: Date | null;

  @Column({ name: 'duration_seconds', type: 'integer', nullable: true })
  durationSeconds!: number | null;

  @Column({ name: 'charge_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  chargeMicros!: bigint | null;

  /** A tenant's call: what it owes at its resale price; null otherwise. */
  @Column({ name: 'billable_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  billableMicros!: bigint | null;

  /** The W3C traceparent of the request (or campaign tick) that placed it, while tracing is on: its events' deliveries continue that trace. */
  @Column({ name: 'trace_parent', type: 'varchar', length: 55, nullable: true })
  traceParent!: string | null;
}
