import { Column, Entity, Index } from 'typeorm';
import { bigintTransformer, TIMESTAMP } from '../lib/columns.js';
import { OrgOwned } from '../orgs/org-owned.js';

export const TEXT_STATUSES = ['sent', 'failed'] as const;
export type TextStatus = (typeof TEXT_STATUSES)[number];
/** Why a text was not sent: its tenant's monthly spend limit was reached (it would have been charged). */
export const TEXT_FAILURE_REASONS = ['spend_limit_reached'] as const;
export type TextFailureReason = (typeof TEXT_FAILURE_REASONS)[number];

/** Recorded and charged when its call ends; handed to the carrier by a job after that commits. */
@Entity('messages')
@Index('messages_org_created_idx', ['orgId', 'createdAt', 'id'])
/** The sweeper's: texts to send not sent yet, oldest first. */
@Index('messages_unsent_idx', ['createdAt'], { where: "sent_at IS NULL AND status = 'sent'" })
export class Message extends OrgOwned {
  @Column({ name: 'payer_org_id', type: 'varchar', length: 40 })
  payerOrgId!: string;

  /** One confirmation per call at most. */
  @Index('messages_call_key', { unique: true })
  @Column({ name: 'call_id', type: 'varchar', length: 40, nullable: true })
  callId!: string | null;

  @Column({ name: 'from_number', type: 'varchar', length: 16 })
  fromNumber!: string;

  @Column({ name: 'to_number', type: 'varchar', length: 16 })
  toNumber!: string;

  @Column({ type: 'text' })
  body!: string;

  @Column({ name: 'charge_micros', type: 'bigint', transformer: bigintTransformer })
  chargeMicros!: bigint;

  /** A tenant's text: what the tenant owes for it at its resale `per_text`. Null for any other text. */
  @Column({ name: 'billable_micros', type: 'bigint', nullable: true, transformer: bigintTransformer })
  billableMicros!: bigint | null;

  /** `failed`: never sent (`failure_reason` says why); `sent`: sent, or handed to the carrier by a job after commit. */
  @Column({ type: 'varchar', length: 16, default: 'sent' })
  status!: TextStatus;

  @Column({ name: 'failure_reason', type: 'varchar', length: 32, nullable: true })
  failureReason!: TextFailureReason | null;

  /** Null until the carrier accepted it; not shown by the API. */
  @Column({ name: 'sent_at', ...TIMESTAMP, nullable: true })
  sentAt!: Date | null;
}
