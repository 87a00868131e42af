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
import type { CampaignsRepository } from './campaigns.repository.js';
import { ContactWindow, type PhoneTimezones } from './contact-window.js';

/** How often a running campaign outside its calling hours, or whose due contacts are all outside theirs, looks again. */
const OUTSIDE_HOURS_RECHECK_MS = 60_000;
/** How many due contacts a tick reads at a time while looking for ones it may call now. */
const DUE_CHUNK = 500;
const RETRY_ON = new Set(['no_answer', 'busy']);
const DEFAULT_SIMULATION = { answer: true, duration_seconds: 5, outcome: 'neutral' } as const;

/** What a tick decided: the calls it placed, and when to look again (null: when a call ends). */
interface TickResult {
  calls: QueuedCall[];
  orgId: string;
  recheckMs: number | null;
}

/** What a campaign's contacts are checked against before one is called. */
export interface ContactChecks {
  contacts: Pick<ContactsRepository, 'numbersOf'>;
  doNotCall: Pick<DoNotCallRepository, 'listedAmong'>;
  timezones: PhoneTimezones;
  /** The clock of calling windows (tests fix it). */
  now: () => Date;
}

/** The due contacts a tick calls now, and whether others wait for their calling window. */
interface Picked {
  contactIds: string[];
  outsideWindow: boolean;
}

/**
 * Runs campaigns, one step (a `campaign-tick` job) at a time: within calling hours, dial the
 * next due contacts, as many as the organization's concurrency in force allows beside the
 * campaign's calls already in flight. A contact is called only inside its calling window
 * (`ContactWindow`: the campaign's hours and 08:00–21:00 at the contact's end) and never when
 * its number is on a do-not-call list (it is skipped for good). The calls are placed as
 * `POST /v1/calls` places them and go through the same engine (and limits) as any other; the
 * campaign ends when every contact is done or skipped.
 */
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
      for (const contactId of picked.contactIds) {
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
      // Woken by each call's end. With none in flight it needs a wake-up of its own: when its
      // earliest retry is due, and, while due contacts wait for their calling window, soon.
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
   * The next due contacts to call now, in the campaign's order, at most `capacity`. On the way,
   * a contact whose number is on a do-not-call list (the organization's or its reseller's) is
   * marked skipped, and one outside its calling window stays pending for a later tick. Due
   * contacts are read a chunk at a time (their numbers and the lists: one statement each per
   * chunk) until `capacity` are found or none is left, so contacts in their window are called
   * now even when many before them are not.
   */
  private async pickContacts(em: EntityManager, campaignId: string, orgId: string, capacity: number, window: ContactWindow): Promise<Picked> {
    const picked: Picked = { contactIds: [], outsideWindow: false };
    let after = 0;
    while (picked.contactIds.length < capacity) {
      const due = await this.campaigns.dueContacts(em, campaignId, DUE_CHUNK, after);
      if (due.length === 0) break;
      after = due[due.length - 1].position;
      const numbers = await this.checks.contacts.numbersOf(em, orgId, due.map((d) => d.contactId));
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
