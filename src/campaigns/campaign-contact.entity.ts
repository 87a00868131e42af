import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Contact } from '../contacts/contact.entity.js';
import { TIMESTAMP } from '../lib/columns.js';
import { Campaign } from './campaign.entity.js';

/** `skipped`: never called, its number being on a do-not-call list when its turn came. */
export type CampaignContactState = 'pending' | 'calling' | 'done' | 'skipped';

/** One contact of a campaign and how far dialing it has got. */
@Entity('campaign_contacts')
@Index('campaign_contacts_due_idx', ['campaignId', 'state', 'nextAttemptAt'])
export class CampaignContact {
  @PrimaryColumn({ name: 'campaign_id', type: 'varchar', length: 40 })
  campaignId!: string;

  @ManyToOne(() => Campaign, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'campaign_id' })
  campaign?: Relation<Campaign>;

  @PrimaryColumn({ name: 'contact_id', type: 'varchar', length: 40 })
  contactId!: string;

  @ManyToOne(() => Contact, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'contact_id' })
  contact?: Relation<Contact>;

  @Column({ type: 'integer' })
  position!: number;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  state!: CampaignContactState;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** A retry waits until then. */
  @Column({ name: 'next_attempt_at', ...TIMESTAMP, nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'last_call_id', type: 'varchar', length: 40, nullable: true })
  lastCallId!: string | null;
}
