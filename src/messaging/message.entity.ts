import { Column, Entity, Index } from 'typeorm';
import { bigintTransformer } from '../lib/columns.js';
import { OrgOwned } from '../orgs/org-owned.js';

/** A text the organization's agent sent (a booking confirmation after a positive call). */
@Entity('messages')
@Index('messages_org_created_idx', ['orgId', 'createdAt', 'id'])
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
}
