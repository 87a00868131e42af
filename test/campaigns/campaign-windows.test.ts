import { expect } from 'chai';
import { TERMINAL_STATUSES } from '../../src/calls/call.entity.js';
import { asCaller, createOrg, expectStatus, type Caller } from '../helpers/api.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { waitForCampaignState, withCallsWorkerAt } from '../helpers/voice.js';

// Campaigns on a controlled clock (CONTRACT.md §4): a contact is dialed only between 08:00 and
// 21:00 in its local time, inside the campaign's own hours, and never when its number is on a
// do-not-call list. The calls worker runs in this process with a clock the tests set.

// Real numbers, by libphonenumber's data.
const NEW_YORK = '+12125550143';
const NEW_YORK_2 = '+16465550107';
const LOS_ANGELES = '+13105550178';
const LONDON = '+442079460123';
const TOLL_FREE = '+18005550199'; // 42 candidate zones, Guam to Adak
const UNASSIGNED = '+9991234567'; // no zone known: the organization's

/** 2026-11-23, a Monday, 15:30 UTC: 10:30 in New York, 07:30 in Los Angeles, 15:30 in London, 01:30 in Guam. */
const MONDAY_1530 = new Date('2026-11-23T15:30:00Z');

interface Setup {
  caller: Caller;
  campaignId: string;
  /** Contact id → its phone number. */
  numbers: Map<string, string>;
}

interface Options {
  /** Acting as this caller (an organization, a tenant), else a new organization with `org`'s fields. */
  caller?: Caller;
  org?: Record<string, unknown>;
  /** The campaign's own fields (`calling_hours`, ...). */
  campaign?: Record<string, unknown>;
}

/** One contact per number and a campaign calling them in that order, started. */
async function runningCampaign(phoneNumbers: string[], options: Options = {}): Promise<Setup> {
  const caller = options.caller ?? asCaller((await createOrg({ balance: '100.00', ...options.org })).key);
  const agents = expectStatus(await caller.get('/v1/agents'), 200).body.data;
  const agentId = agents[0]?.id ?? expectStatus(await caller.post('/v1/agents', { name: 'Ava' }), 201).body.id;
  const numbers = new Map<string, string>();
  for (const [i, phone_number] of phoneNumbers.entries())
    numbers.set(expectStatus(await caller.post('/v1/contacts', { name: `Contact ${i}`, phone_number }), 201).body.id, phone_number);
  const campaign = expectStatus(
    await caller.post('/v1/campaigns', {
      name: 'Recalls',
      agent_id: agentId,
      contact_ids: [...numbers.keys()],
      simulate: { duration_seconds: 1 },
      ...options.campaign,
    }),
    201,
  ).body;
  expectStatus(await caller.patch(`/v1/campaigns/${campaign.id}`, { state: 'running' }), 200);
  return { caller, campaignId: campaign.id, numbers };
}

/**
 * Waits until the campaign has placed `count` calls and all have ended; returns the numbers called,
 * in order. Calls placed by one tick share their `created_at` (and ids are random): those come in
 * the campaign's contact order.
 */
async function calledNumbers(setup: Setup, count: number): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const calls: any[] = expectStatus(await setup.caller.get(`/v1/calls?campaign_id=${setup.campaignId}&limit=100`), 200).body.data;
    if (calls.length === count && calls.every((c) => (TERMINAL_STATUSES as readonly string[]).includes(c.status))) {
      const position = [...setup.numbers.keys()];
      const placed = (c: any) => [Date.parse(c.created_at), position.indexOf(c.contact_id)];
      return calls.sort((a, b) => placed(a)[0] - placed(b)[0] || placed(a)[1] - placed(b)[1]).map((c) => setup.numbers.get(c.contact_id)!);
    }
    expect(calls.length, 'calls placed').to.be.at.most(count);
    if (Date.now() > deadline) throw new Error(`${calls.length} calls of ${count}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const campaignOf = async (setup: Setup) => expectStatus(await setup.caller.get(`/v1/campaigns/${setup.campaignId}`), 200).body;

/** A pause for anything still to happen (a tick that would wrongly place a call) to happen. */
const settle = () => new Promise((r) => setTimeout(r, 600));

describe('campaigns on a controlled clock', function () {
  this.timeout(60_000);
  const clock = { at: MONDAY_1530 };
  const worker = withCallsWorkerAt(clock);
  beforeEach(() => {
    clock.at = MONDAY_1530;
  });

  /** The campaign's pending wake-up (a delayed `campaign-tick`), if any. */
  async function recheckOf(campaignId: string) {
    const delayed = await worker.runtime().queues.calls.queue.getDelayed();
    return delayed.find((job) => job.name === 'campaign-tick' && job.data.campaignId === campaignId);
  }

  /** Moves the clock and runs the campaign's pending wake-up now, as if its delay had passed. */
  async function wakeAt(setup: Setup, iso: string): Promise<void> {
    clock.at = new Date(iso);
    const recheck = await recheckOf(setup.campaignId);
    expect(recheck, 'the campaign has a wake-up of its own').to.not.equal(undefined);
    await recheck!.promote();
  }

  describe('calling windows by destination', () => {
    it('dials a contact where it is 10:30 and not one where it is 07:30; the waiting one stays pending and is dialed once its window opens', async () => {
      const setup = await runningCampaign([LOS_ANGELES, NEW_YORK, TOLL_FREE, LONDON, UNASSIGNED]);
      // Los Angeles (07:30) and the toll-free number (01:30 in Guam) wait; the unassigned number
      // is judged in the organization's zone (UTC: 15:30).
      expect(await calledNumbers(setup, 3)).to.deep.equal([NEW_YORK, LONDON, UNASSIGNED]);
      await settle();
      const waiting = await campaignOf(setup);
      expect(waiting).to.include({ state: 'running' });
      expect(waiting.contacts).to.deep.equal({ total: 5, pending: 2, calling: 0, done: 3, skipped: 0 });
      // Nothing in flight, so it wakes itself up to look again.
      expect((await recheckOf(setup.campaignId))?.opts.delay).to.be.within(1, 60_000);

      await wakeAt(setup, '2026-11-23T16:00:00Z'); // 08:00 in Los Angeles, 02:00 in Guam
      expect(await calledNumbers(setup, 4)).to.deep.equal([NEW_YORK, LONDON, UNASSIGNED, LOS_ANGELES]);
      await settle();
      expect((await campaignOf(setup)).contacts).to.include({ pending: 1, done: 4 });

      await wakeAt(setup, '2026-11-23T23:00:00Z'); // 09:00 in Guam, 13:00 in Adak, 19:30 in St. John's
      expect(await calledNumbers(setup, 5)).to.deep.equal([NEW_YORK, LONDON, UNASSIGNED, LOS_ANGELES, TOLL_FREE]);
      expect((await waitForCampaignState(setup.caller, setup.campaignId, 'completed')).contacts).to.include({ pending: 0, done: 5 });
    });

    it('dials the contacts inside their window now, however many before them are outside theirs', async () => {
      // One call at a time: the contacts it may call are found beyond the first ones.
      const setup = await runningCampaign([LOS_ANGELES, '+12135550101', '+14155550102', NEW_YORK], {
        org: { ceiling: { max_concurrent_calls: 1, max_calls_per_hour: 100 } },
      });
      expect(await calledNumbers(setup, 1)).to.deep.equal([NEW_YORK]);
    });

    it('a number with no known zone follows the organization’s time zone', async () => {
      const setup = await runningCampaign([UNASSIGNED, NEW_YORK], { org: { timezone: 'America/Los_Angeles' } });
      expect(await calledNumbers(setup, 1)).to.deep.equal([NEW_YORK]); // 07:30 in Los Angeles
    });

    it('the campaign’s own hours narrow the window and never widen it', async () => {
      // Wider: 06:00–22:00 in Los Angeles, where it is 07:30, does not reach a Los Angeles contact.
      const wide = await runningCampaign([LOS_ANGELES, NEW_YORK], {
        org: { timezone: 'America/Los_Angeles' },
        campaign: { calling_hours: { start: '06:00', end: '22:00' } },
      });
      expect(await calledNumbers(wide, 1)).to.deep.equal([NEW_YORK]);

      // Narrower: 16:00–18:00 UTC keeps out London (15:30) and New York (10:30), both inside 08:00–21:00.
      const narrow = await runningCampaign([LONDON, NEW_YORK], { campaign: { calling_hours: { start: '16:00', end: '18:00' } } });
      await settle();
      expect(await calledNumbers(narrow, 0)).to.deep.equal([]);
      expect((await campaignOf(narrow)).contacts).to.include({ pending: 2 });
      await wakeAt(narrow, '2026-11-23T16:30:00Z');
      expect(await calledNumbers(narrow, 2)).to.deep.equal([LONDON, NEW_YORK]);
    });
  });

  describe('do-not-call lists', () => {
    it('a campaign creates no call for a listed contact: it is skipped for good, and the campaign completes', async () => {
      const caller = asCaller((await createOrg({ balance: '100.00' })).key);
      for (const phone_number of [NEW_YORK, LOS_ANGELES]) expectStatus(await caller.post('/v1/do-not-call', { phone_number }), 201);
      // Listed and in its window, unlisted, listed and outside its window.
      const setup = await runningCampaign([NEW_YORK, NEW_YORK_2, LOS_ANGELES], { caller });
      expect(await calledNumbers(setup, 1)).to.deep.equal([NEW_YORK_2]);
      const done = await waitForCampaignState(caller, setup.campaignId, 'completed');
      expect(done.contacts).to.deep.equal({ total: 3, pending: 0, calling: 0, done: 1, skipped: 2 });
      await settle();
      expect(await calledNumbers(setup, 1)).to.deep.equal([NEW_YORK_2]);
    });

    it('a tenant’s campaign skips the numbers on its reseller’s list', async () => {
      const owner = await reseller({ balance: '100.00' });
      const tenant = await createTenant(owner, { timezone: 'UTC' });
      expectStatus(await owner.as.post('/v1/do-not-call', { phone_number: LONDON }), 201);
      const setup = await runningCampaign([LONDON, NEW_YORK], { caller: owner.inside(tenant.id) });
      expect(await calledNumbers(setup, 1)).to.deep.equal([NEW_YORK]);
      expect((await waitForCampaignState(setup.caller, setup.campaignId, 'completed')).contacts).to.include({ done: 1, skipped: 1 });
    });
  });
});
