import type { DataSource } from 'typeorm';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { Actor } from '../auth/actor.js';
import type { CallJobs } from '../calls/calls.jobs.js';
import type { ContactsRepository } from '../contacts/contacts.repository.js';
import type { Page, PageParams, Sql } from '../lib/pagination.js';
import { ConflictError, NotFoundError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Campaign, CampaignState } from './campaign.entity.js';
import type { CampaignRow, CampaignsRepository } from './campaigns.repository.js';
import type { CreateCampaignInput, UpdateCampaignInput } from './campaigns.schemas.js';

/** The moves a campaign may make: draft → running ⇄ paused → completed. */
const TRANSITIONS: Record<CampaignState, CampaignState[]> = {
  draft: ['running'],
  running: ['paused', 'completed'],
  paused: ['running', 'completed'],
  completed: [],
};

function present(k: CampaignRow) {
  return {
    id: k.id,
    name: k.name,
    agent_id: k.agent_id,
    state: k.state,
    calling_hours: k.calling_hours_start && k.calling_hours_end ? { start: k.calling_hours_start, end: k.calling_hours_end } : null,
    weekdays: k.weekdays,
    retry: { max_retries: k.retry_max, delay_seconds: k.retry_delay_seconds },
    contacts: { total: k.total, pending: k.pending, calling: k.calling, done: k.done, skipped: k.skipped },
    created_at: k.created_at.toISOString(),
    updated_at: k.updated_at.toISOString(),
    completed_at: k.completed_at?.toISOString() ?? null,
  };
}

function applyWindow(campaign: Partial<Campaign>, input: UpdateCampaignInput): void {
  if (input.calling_hours !== undefined) {
    campaign.callingHoursStart = input.calling_hours?.start ?? null;
    campaign.callingHoursEnd = input.calling_hours?.end ?? null;
  }
  if (input.weekdays !== undefined) campaign.weekdays = input.weekdays;
  if (input.retry) {
    campaign.retryMax = input.retry.max_retries;
    campaign.retryDelaySeconds = input.retry.delay_seconds;
  }
}

/** Campaigns (capability `operate`): an agent dialing a list of contacts through the call engine. */
export class CampaignsService {
  constructor(
    private readonly db: DataSource,
    private readonly campaigns: CampaignsRepository,
    private readonly jobs: CallJobs,
    private readonly agents: Pick<AgentsRepository, 'findRow'>,
    private readonly contacts: Pick<ContactsRepository, 'unknownContact'>,
  ) {}

  async create(actor: Actor, input: CreateCampaignInput) {
    const id = await this.db.transaction(async (em) => {
      await this.agents.findRow(em, actor.org.id, input.agent_id);
      const unknown = await this.contacts.unknownContact(em, actor.org.id, input.contact_ids);
      if (unknown) throw new NotFoundError('contact', `No such contact: ${unknown}.`);
      const campaign: Partial<Campaign> = {
        id: newId('cmp'),
        orgId: actor.org.id,
        name: input.name,
        agentId: input.agent_id,
        state: 'draft',
        simulate: input.simulate ?? null,
      };
      applyWindow(campaign, input);
      await this.campaigns.insert(em, campaign, input.contact_ids);
      return campaign.id!;
    });
    return this.get(actor, id);
  }

  list(actor: Actor, query: PageParams & { state?: string }): Promise<Page<ReturnType<typeof present>>> {
    return this.campaigns.list(actor.org.id, query, present);
  }

  async get(actor: Actor, id: string, em: Sql = this.db) {
    const row = await this.campaigns.find(em, actor.org.id, id);
    if (!row) throw new NotFoundError('campaign');
    return present(row);
  }

  /** Changes settings and/or moves the state; starting or resuming wakes the campaign up. */
  async update(actor: Actor, id: string, input: UpdateCampaignInput) {
    const { view, wake } = await this.db.transaction(async (em) => {
      const campaign = await this.campaigns.lock(em, id, actor.org.id);
      if (!campaign) throw new NotFoundError('campaign');
      const from = campaign.state;
      if (input.state && input.state !== from) {
        if (!TRANSITIONS[from].includes(input.state)) {
          throw new ConflictError('invalid_state_transition', `A ${from} campaign cannot become ${input.state}.`, { from, to: input.state });
        }
        campaign.state = input.state;
        if (input.state === 'completed') campaign.completedAt = new Date();
      }
      if (input.name) campaign.name = input.name;
      applyWindow(campaign, input);
      await this.campaigns.save(em, campaign);
      return { view: await this.get(actor, id, em), wake: campaign.state === 'running' };
    });
    if (wake) await this.jobs.campaignTick(id);
    return view;
  }
}
