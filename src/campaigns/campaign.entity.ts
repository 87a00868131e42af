import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Agent } from '../agents/agent.entity.js';
import type { SimulateScript } from '../calls/call.entity.js';
import { TIMESTAMP } from '../lib/columns.js';
import { OrgOwned } from '../orgs/org-owned.js';

export type CampaignState = 'draft' | 'running' | 'paused' | 'completed';

/** An agent dialing a list of contacts, within calling hours, with optional retries. */
@Entity('campaigns')
@Index('campaigns_org_created_idx', ['orgId', 'createdAt', 'id'])
export class Campaign extends OrgOwned {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ name: 'agent_id', type: 'varchar', length: 40 })
  agentId!: string;

  @ManyToOne(() => Agent, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'agent_id' })
  agent?: Relation<Agent>;

  @Index('campaigns_state_idx')
  @Column({ type: 'varchar', length: 16, default: 'draft' })
  state!: CampaignState;

  /** Local "HH:MM" in the organization's time zone; null = any time. */
  @Column({ name: 'calling_hours_start', type: 'char', length: 5, nullable: true })
  callingHoursStart!: string | null;

  @Column({ name: 'calling_hours_end', type: 'char', length: 5, nullable: true })
  callingHoursEnd!: string | null;

  @Column({ type: 'smallint', array: true, nullable: true })
  weekdays!: number[] | null;

  /** Extra attempts for contacts whose call ended `no_answer` or `busy`. */
  @Column({ name: 'retry_max', type: 'integer', default: 0 })
  retryMax!: number;

  @Column({ name: 'retry_delay_seconds', type: 'integer', default: 0 })
  retryDelaySeconds!: number;

  @Column({ type: 'jsonb', nullable: true })
  simulate!: SimulateScript | null;

  @Column({ name: 'completed_at', ...TIMESTAMP, nullable: true })
  completedAt!: Date | null;
}
