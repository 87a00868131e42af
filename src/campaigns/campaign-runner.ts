import { UnrecoverableError } from 'bullmq';
import type { DataSource, EntityManager } from 'typeorm';
import { effectiveLimits } from '../calls/call-limits.js';
import type { CallJobs } from '../calls/calls.jobs.js';
import type { CallsRepository, QueuedCall } from '../calls/calls.repository.js';
import type { CallEndHooks, CallEngine } from '../calls/engine.js';
import type { ContactsRepository } from '../contacts/contacts.repository.js';
import type { DoNotCallRepository } from '../do-not-call/do-not-call.repository.js';
import { logger } from '../lib/logger.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { SpendLimits } from '../tenants/spend-limit.js';
import type { CampaignsRepository } from './campaigns.repository.js';
import { ContactWindow, type PhoneTimezones } from './contact-window.js';

/** How often a campaign outside its hours, whose due contacts all are, or whose tenant's spend limit is reached, looks again. */
const OUTSIDE_HOURS_RECHECK_MS = 60_000;
/** How many due contacts a tick reads at a time while looking for ones it may call now. */
const DUE_CHUNK = 500;
const RETRY_ON = new Set(['no_answer', 'busy']);
const DEFAULT_SIMULATION = { answer: true, duration_seconds: 5, outcome: 'neutral' } as const;

interface TickResult {
  calls: QueuedCall[];
  orgId: string;
  recheckMs: number | null;
}

export interface ContactChecks {
  contacts: Pick<ContactsRepository, 'numbersOf'>;
  doNotCall: Pick<DoNotCallRepository, 'listedAmong'>;
  timezones: PhoneTimezones;
  /** The clock of calling windows (tests fix it). */
  now: () => Date;
  /** The month a tenant's spend limit applies to. */
  spend: Pick<SpendLimits, 'month'>;
}

interface Picked {
  contactIds: string[];
  outsideWindow: boolean;
}

/** One `campaign-tick` at a time, through the same engine and limits as `POST /v1/calls`. */
export class CampaignRunner {
  constructor(
    private readonly db: DataSource,
    private readonly campaigns: CampaignsRepository,
    private readonly calls: CallsRepository,
    private readonly orgs: Pick<OrganizationsRepository, 'findWithParent'>,
    private readonly engine: CallEngine,
    private readonly checks: ContactChecks,
  ) {}

  async tick(campaignId: string): Promise<void> {
    const next = await this.db.transaction(async (em): Promise<TickResult | null> => {
      const campaign = await this.campaigns.lock(em, campaignId);
      if (!campaign || campaign.state !== 'running') return null;
      const org = (await this.orgs.findWithParent(em, campaign.orgId))!;
      if (org.disabled) return null;
      const hours = { start: campaign.callingHoursStart, end: campaign.callingHoursEnd, weekdays: campaign.weekdays };
      const window = new ContactWindow(this.checks.timezones, hours, org.timezone, this.checks.now());
      if (!window.campaignOpen) return { calls: [], orgId: org.id, recheckMs: OUTSIDE_HOURS_RECHECK_MS };

      const { maxConcurrentCalls } = effectiveLimits(org);
      const capacity = Math.max(0, maxConcurrentCalls - (await this.campaigns.callingCount(em, campaign.id)));
      const picked = await this.pickContacts(em, campaign.id, org.id, capacity, window);
      const calls: QueuedCall[] = [];
      const month = this.checks.spend.month();
      for (const contactId of picked.contactIds) {
        const result = await this.calls.placeOutbound(em, {
          orgId: org.id,
          agentId: campaign.agentId,
          contactId,
          campaignId: campaign.id,
          simulate: campaign.simulate ?? DEFAULT_SIMULATION,
          month,
        });
        // The tenant's monthly spend limit is reached: no call; its contacts stay pending until it allows (the sweep's ticks look again).
        if (!result.placed && result.reason === 'spend_limit') return { calls, orgId: org.id, recheckMs: OUTSIDE_HOURS_RECHECK_MS };
        if (!result.placed) {
          // Agent and contacts cannot be deleted while the campaign exists: only money can be missing;
          // anything else is a defect no retry mends.
          if (result.reason !== 'unfunded')
            throw new UnrecoverableError(`campaign ${campaign.id} could not call contact ${contactId}: ${result.reason} not found`);
          // Pause rather than fail contact after contact.
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
      // Woken by each call's end; with none in flight, by its earliest retry, or soon while contacts wait for their window.
      if (left.calling > 0) return { calls, orgId: org.id, recheckMs: null };
      const waits = [left.nextDueMs === null ? null : Math.max(0, left.nextDueMs), picked.outsideWindow ? OUTSIDE_HOURS_RECHECK_MS : null];
      const due = waits.filter((ms) => ms !== null);
      return { calls, orgId: org.id, recheckMs: due.length ? Math.min(...due) : null };
    });
    if (!next) return;
    if (next.calls.length) await this.engine.submitOutbound(next.orgId, next.calls);
    if (next.recheckMs !== null) await this.engine.jobs.campaignTick(campaignId, next.recheckMs);
  }

  /**
   * Up to `capacity` due contacts callable now; listed ones are marked skipped, those outside their window
   * stay pending. Read a chunk at a time, so contacts in their window are called even behind many that are not.
   */
  private async pickContacts(em: EntityManager, campaignId: string, orgId: string, capacity: number, window: ContactWindow): Promise<Picked> {
    const picked: Picked = { contactIds: [], outsideWindow: false };
    let after = 0;
    while (picked.contactIds.length < capacity) {
      const due = await this.campaigns.dueContacts(em, campaignId, DUE_CHUNK, after);
      if (due.length === 0) break;
      after = due[due.length - 1].position;
      const numbers = await this.checks.contacts.numbersOf(
        em,
        orgId,
        due.map((d) => d.contactId),
      );
      const listed = await this.checks.doNotCall.listedAmong(em, orgId, [...new Set(numbers.values())]);
      const skipped: string[] = [];
      for (const { contactId } of due) {
        const phoneNumber = numbers.get(contactId)!;
        if (listed.has(phoneNumber)) skipped.push(contactId);
        else if (picked.contactIds.length === capacity) break;
        else if (await window.allows(phoneNumber)) picked.contactIds.push(contactId);
        else picked.outsideWindow = true;
      }
      await this.campaigns.markSkipped(em, campaignId, skipped);
      if (due.length < DUE_CHUNK) break;
    }
    return picked;
  }
}

/** In the ending transaction each contact is recorded done or due again; after commit the campaign is woken. */
export function campaignCallEndHooks(campaigns: CampaignsRepository, jobs: CallJobs): CallEndHooks {
  return {
    during: async (em, ended) => {
      for (const call of ended) {
        if (!call.campaignId) continue;
        // Never dialed for the tenant's spend limit: the contact is pending again, its attempt not counted.
        const next = call.endReason === 'spend_limit_reached' ? 'undialed' : RETRY_ON.has(call.status) ? 'retry' : 'done';
        await campaigns.recordCallEnd(em, call.campaignId, call.id, next);
      }
    },
    after: async (ended) => {
      const running = new Set(ended.map((c) => c.campaignId).filter((id) => id !== null));
      for (const id of running) await jobs.campaignTick(id);
    },
  };
}
