import type { EntityManager } from 'typeorm';
import { Agent } from '../agents/agent.entity.js';
import type { Actor } from '../auth/actor.js';
import type { CallJobs } from '../calls/calls.jobs.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { db } from '../lib/db.js';
import { ConflictError, NotFoundError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { Campaign, type CampaignState } from './campaign.entity.js';
import type { CreateCampaignInput, UpdateCampaignInput } from './campaigns.schemas.js';

/** The moves a campaign may make: draft → running ⇄ paused → completed. */
const TRANSITIONS: Record<CampaignState, CampaignState[]> = {
  draft: ['running'],
  running: ['paused', 'completed'],
  paused: ['running', 'completed'],
  completed: [],
};

interface CampaignRow {
  id: string;
  name: string;
  agent_id: string;
  state: CampaignState;
  calling_hours_start: string | null;
  calling_hours_end: string | null;
  weekdays: number[] | null;
  retry_max: number;
  retry_delay_seconds: number;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  total: number;
  pending: number;
  calling: number;
  done: number;
}

const COLUMNS = `k.id, k.name, k.agent_id, k.state, k.calling_hours_start, k.calling_hours_end, k.weekdays, k.retry_max,
  k.retry_delay_seconds, k.created_at, k.updated_at, k.completed_at,
  (SELECT count(*)::int FROM campaign_contacts cc WHERE cc.campaign_id = k.id) AS total,
  (SELECT count(*)::int FROM campaign_contacts cc WHERE cc.campaign_id = k.id AND cc.state = 'pending') AS pending,
  (SELECT count(*)::int FROM campaign_contacts cc WHERE cc.campaign_id = k.id AND cc.state = 'calling') AS calling,
  (SELECT count(*)::int FROM campaign_contacts cc WHERE cc.campaign_id = k.id AND cc.state = 'done') AS done`;

function present(k: CampaignRow) {
  return {
    id: k.id,
    name: k.name,
    agent_id: k.agent_id,
    state: k.state,
    calling_hours: k.calling_hours_start && k.calling_hours_end ? { start: k.calling_hours_start, end: k.calling_hours_end } : null,
    weekdays: k.weekdays,
    retry: { max_retries: k.retry_max, delay_seconds: k.retry_delay_seconds },
    contacts: { total: k.total, pending: k.pending, calling: k.calling, done: k.done },
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
  constructor(private readonly jobs: CallJobs) {}

  async create(actor: Actor, input: CreateCampaignInput) {
    const id = await db.transaction(async (em) => {
      if (!(await em.findOneBy(Agent, { id: input.agent_id, orgId: actor.org.id }))) throw new NotFoundError('agent');
      const found: Array<{ id: string }> = await em.query('SELECT id FROM contacts WHERE org_id = $1 AND id = ANY($2)', [actor.org.id, input.contact_ids]);
      if (found.length !== input.contact_ids.length) {
        const known = new Set(found.map((r) => r.id));
        throw new NotFoundError('contact', `No such contact: ${input.contact_ids.find((c) => !known.has(c))}.`);
      }
      const campaign: Partial<Campaign> = { id: newId('cmp'), orgId: actor.org.id, name: input.name, agentId: input.agent_id, state: 'draft', simulate: input.simulate ?? null };
      applyWindow(campaign, input);
      await em.insert(Campaign, campaign);
      await em.query(
        `INSERT INTO campaign_contacts (campaign_id, contact_id, position) SELECT $1, id, ord FROM unnest($2::varchar[]) WITH ORDINALITY AS t(id, ord)`,
        [campaign.id, input.contact_ids],
      );
      return campaign.id!;
    });
    return this.get(actor, id);
  }

  list(actor: Actor, query: PageParams & { state?: string }): Promise<Page<ReturnType<typeof present>>> {
    const filters = where('k.org_id = ?', actor.org.id).equal('k.state', query.state);
    return listPage(db, { select: COLUMNS, from: 'campaigns k', where: filters }, query, present);
  }

  async get(actor: Actor, id: string, em: EntityManager = db.manager) {
    const [row] = await em.query(`SELECT ${COLUMNS} FROM campaigns k WHERE k.id = $1 AND k.org_id = $2`, [id, actor.org.id]);
    if (!row) throw new NotFoundError('campaign');
    return present(row);
  }

  /** Changes settings and/or moves the state; starting or resuming wakes the campaign up. */
  async update(actor: Actor, id: string, input: UpdateCampaignInput) {
    const { view, wake } = await db.transaction(async (em) => {
      const campaign = await em.findOne(Campaign, { where: { id, orgId: actor.org.id }, lock: { mode: 'pessimistic_write' } });
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
      await em.save(campaign);
      return { view: await this.get(actor, id, em), wake: campaign.state === 'running' };
    });
    if (wake) await this.jobs.campaignTick(id);
    return view;
  }
}
