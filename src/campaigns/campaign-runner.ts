import { UnrecoverableError } from 'bullmq';
import type { DataSource } from 'typeorm';
import { effectiveLimits } from '../calls/call-limits.js';
import type { CallJobs } from '../calls/calls.jobs.js';
import type { CallsRepository, QueuedCall } from '../calls/calls.repository.js';
import type { CallEndHooks, CallEngine } from '../calls/engine.js';
import { logger } from '../lib/logger.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { withinCallingWindow } from './calling-hours.js';
import type { CampaignsRepository } from './campaigns.repository.js';

/** How often a running campaign outside its calling hours looks again. */
const OUTSIDE_HOURS_RECHECK_MS = 60_000;
const RETRY_ON = new Set(['no_answer', 'busy']);
const DEFAULT_SIMULATION = { answer: true, duration_seconds: 5, outcome: 'neutral' } as const;

/** What a tick decided: the calls it placed, and when to look again (null: when a call ends). */
interface TickResult {
  calls: QueuedCall[];
  orgId: string;
  recheckMs: number | null;
}

/**
 * Runs campaigns, one step (a `campaign-tick` job) at a time: within calling hours, dial the
 * next due contacts, as many as the organization's concurrency in force allows beside the
 * campaign's calls already in flight. The calls are placed as `POST /v1/calls` places them and
 * go through the same engine (and limits) as any other; the campaign ends when every contact is done.
 */
export class CampaignRunner {
  constructor(
    private readonly db: DataSource,
    private readonly campaigns: CampaignsRepository,
    private readonly calls: CallsRepository,
    private readonly orgs: Pick<OrganizationsRepository, 'findWithParent'>,
    private readonly engine: CallEngine,
  ) {}

  async tick(campaignId: string): Promise<void> {
    const next = await this.db.transaction(async (em): Promise<TickResult | null> => {
      const campaign = await this.campaigns.lock(em, campaignId);
      if (!campaign || campaign.state !== 'running') return null;
      const org = (await this.orgs.findWithParent(em, campaign.orgId))!;
      if (org.disabled) return null;
      const window = { start: campaign.callingHoursStart, end: campaign.callingHoursEnd, weekdays: campaign.weekdays };
      if (!withinCallingWindow(window, new Date(), org.timezone)) return { calls: [], orgId: org.id, recheckMs: OUTSIDE_HOURS_RECHECK_MS };

      const { maxConcurrentCalls } = effectiveLimits(org);
      const capacity = Math.max(0, maxConcurrentCalls - (await this.campaigns.callingCount(em, campaign.id)));
      const calls: QueuedCall[] = [];
      for (const contactId of await this.campaigns.dueContacts(em, campaign.id, capacity)) {
        const result = await this.calls.placeOutbound(em, {
          orgId: org.id,
          agentId: campaign.agentId,
          contactId,
          campaignId: campaign.id,
          simulate: campaign.simulate ?? DEFAULT_SIMULATION,
        });
        if (!result.placed) {
          // The campaign's agent and contacts cannot be deleted while it exists: only money can
          // be missing. Anything else is a defect no retry mends.
          if (result.reason !== 'unfunded') throw new UnrecoverableError(`campaign ${campaign.id} could not call contact ${contactId}: ${result.reason} not found`);
          // Out of funds: the campaign pauses rather than failing contact after contact.
          logger.warn({ campaignId }, 'campaign paused: the paying balance is not above zero');
          await this.campaigns.setState(em, campaign.id, 'paused');
          return { calls, orgId: org.id, recheckMs: null };
        }
        await this.campaigns.markCalling(em, campaign.id, contactId, result.call.id);
        calls.push(result.call);
      }

      const left = await this.campaigns.progress(em, campaign.id);
      if (left.calling === 0 && left.pending === 0) {
        await this.campaigns.setState(em, campaign.id, 'completed');
        return { calls, orgId: org.id, recheckMs: null };
      }
      // Woken by each call's end; a retry waiting for its time needs its own wake-up.
      const recheckMs = left.calling === 0 && left.nextDueMs !== null ? Math.max(0, left.nextDueMs) : null;
      return { calls, orgId: org.id, recheckMs };
    });
    if (!next) return;
    if (next.calls.length) await this.engine.submitOutbound(next.orgId, next.calls);
    if (next.recheckMs !== null) await this.engine.jobs.campaignTick(campaignId, next.recheckMs);
  }
}

/**
 * Campaign calls report their end to the campaign, which then dials on: in the ending
 * transaction each contact is recorded done, or due again for a retry; after commit the
 * campaign is woken.
 */
export function campaignCallEndHooks(campaigns: CampaignsRepository, jobs: CallJobs): CallEndHooks {
  return {
    during: async (em, ended) => {
      for (const call of ended) if (call.campaignId) await campaigns.recordCallEnd(em, call.campaignId, call.id, RETRY_ON.has(call.status));
    },
    after: async (ended) => {
      const running = new Set(ended.map((c) => c.campaignId).filter((id) => id !== null));
      for (const id of running) await jobs.campaignTick(id);
    },
  };
}
