// A tenant's monthly spend limit (CONTRACT.md §5 "Tenant spend limit"): set and shown in the
// tenant's limits, `spent_this_month` being the month's `charges.total` of its usage; once reached,
// POST /v1/calls is 402, queued calls end canceled / spend_limit_reached, campaigns wait, charged
// texts fail; `tenant.spend_threshold` at 80% and 100%, once a month each; exact across two calls
// workers.
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import request from 'supertest';
import type { RinglaneApp } from '../../src/app.js';
import { formatMoney, parseMoney } from '../../src/lib/money.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { spendMonth } from '../../src/tenants/spend-limit.js';
import { UsageRollup } from '../../src/usage/usage-rollup.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { startOfUtcMonth } from '../../src/usage/usage-window.js';
import { verifyRinglaneSignature } from '../../src/webhooks/verify.js';
import { appOver, bearer, expectError, expectStatus, type Caller } from '../helpers/api.js';
import { db } from '../helpers/db.js';
import { ServiceProcesses, waitUntil } from '../helpers/processes.js';
import { receiversOfBlock, type Receiver } from '../helpers/receiver.js';
import { redisForTests } from '../helpers/redis.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { eventsOf, startCallsWorker, stopProcess, uniquePhone, waitForCalls, waitForCampaignState } from '../helpers/voice.js';

const SECRET = 'a secret for spend thresholds';
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tenant {
  id: string;
  inside: Caller;
  agentId: string;
  contactIds: string[];
}

/** A tenant of `owner` with its starter agent and `contacts` contacts (numbers where it is daytime). */
async function tenantOf(owner: Reseller, contacts = 1): Promise<Tenant> {
  const tenant = await createTenant(owner);
  const inside = owner.inside(tenant.id);
  const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
  const contactIds: string[] = [];
  for (let i = 0; i < contacts; i++)
    contactIds.push(expectStatus(await inside.post('/v1/contacts', { name: `Pat ${i}`, phone_number: uniquePhone() }), 201).body.id);
  return { id: tenant.id, inside, agentId: agent.id, contactIds };
}

const placeInside = (tenant: Tenant, simulate: Record<string, unknown>, contact = 0) =>
  tenant.inside.post('/v1/calls', { agent_id: tenant.agentId, contact_id: tenant.contactIds[contact], simulate });

const limitsOf = async (owner: Reseller, tenantId: string) => expectStatus(await owner.as.get(`/v1/tenants/${tenantId}/limits`), 200).body;
const setLimit = async (owner: Reseller, tenantId: string, limit: string | null) =>
  expectStatus(await owner.as.patch(`/v1/tenants/${tenantId}/limits`, { monthly_spend_limit: limit }), 200).body;
const thresholdFeed = async (caller: Caller) =>
  expectStatus(await caller.get('/v1/events?type=tenant.spend_threshold&limit=100'), 200).body.data as Array<{ id: string; data: any }>;
const finished = (owner: Reseller, tenant: Tenant, ids: string[]) => waitForCalls(owner, ids, 60_000, { 'X-Tenant-Id': tenant.id });
const month = () => spendMonth(new Date()).month;

describe('tenant spend limit (CONTRACT.md §5)', function () {
  this.timeout(120_000);

  describe('monthly_spend_limit and spent_this_month in the tenant’s limits', () => {
    it('none by default; PATCH sets, shows and removes it, with the month’s spend and the reseller’s currency; bad values are 400', async () => {
      const owner = await reseller({ currency: 'EUR' });
      const tenant = await createTenant(owner);
      const path = `/v1/tenants/${tenant.id}/limits`;
      expect(await limitsOf(owner, tenant.id)).to.include({ monthly_spend_limit: null, spent_this_month: '0.000000', currency: 'EUR' });
      expect(await setLimit(owner, tenant.id, '12.5')).to.include({ monthly_spend_limit: '12.500000', spent_this_month: '0.000000', currency: 'EUR' });
      // The call limits stay as they were; a PATCH of them leaves the spend limit.
      const both = expectStatus(await owner.as.patch(path, { max_concurrent_calls: 2 }), 200).body;
      expect(both).to.include({ max_concurrent_calls: 2, monthly_spend_limit: '12.500000' });
      expect(await setLimit(owner, tenant.id, '0')).to.include({ monthly_spend_limit: '0.000000' });
      expect(await setLimit(owner, tenant.id, '999999999999.999999')).to.include({ monthly_spend_limit: '999999999999.999999' });
      for (const bad of ['-0.000001', '-5', '12.1234567', 'abc', '', ' 12', '1e3', '0x10', 12, 12.5, true, ['1'], { amount: '1' }, '1000000000000.000001']) {
        const error = expectError(await owner.as.patch(path, { monthly_spend_limit: bad }), 400, 'invalid_request');
        expect(
          error.details.map((d: { path: string }) => d.path),
          JSON.stringify(bad),
        ).to.deep.equal(['monthly_spend_limit']);
      }
      expect(await limitsOf(owner, tenant.id)).to.include({ monthly_spend_limit: '999999999999.999999', max_concurrent_calls: 2 });
      expect(await setLimit(owner, tenant.id, null)).to.include({ monthly_spend_limit: null });
      // Inside the tenant the tenant endpoints are closed; an ordinary organization is no reseller.
      expectError(await owner.inside(tenant.id).patch(path, { monthly_spend_limit: '1' }), 403, 'not_available_for_tenant');
    });
  });

  describe('the month’s spend: charges.total of the month’s usage', () => {
    const rollup = new UsageRollup(new UsageRepository(db));
    const apps: RinglaneApp[] = [];
    // Rows are written at chosen past times, which a rollup run earlier would not revisit (as in test/usage).
    beforeEach(async () => {
      await db.query('DELETE FROM usage_watermark');
    });
    after(async () => {
      await Promise.all(apps.map((a) => a.close()));
    });
    /** An app whose clock (createRuntime's `now`, the month's) is `at`. */
    const appAt = (at: Date) => {
      const app = appOver({ now: () => at });
      apps.push(app);
      return app;
    };

    it('last month’s spend, read raw, across the rollup’s watermark and from buckets alike, equals its usage; a limit it reached lifts at the start of this month', async () => {
      const owner = await reseller({ balance: '1000.00' });
      const tenant = await tenantOf(owner);
      const thisMonth = startOfUtcMonth(new Date());
      const lastMonth = startOfUtcMonth(new Date(thisMonth.getTime() - 1));
      const charges: Array<[Date, string, bigint]> = [
        [new Date(lastMonth.getTime() - 1), 'call', -1_000_000n], // the month before: out
        [lastMonth, 'call', -2_000_001n], // its first instant: in
        [new Date(lastMonth.getTime() + 49 * HOUR + 17), 'text', -50_000n],
        [new Date(lastMonth.getTime() + 300 * HOUR), 'adjustment', 40_000_000n], // a top-up: no spend
        [new Date(thisMonth.getTime() - 1), 'call', -3_000_003n], // its last instant: in
        [thisMonth, 'text', -70_000n], // this month's
      ];
      for (const [i, [at, kind, micros]] of charges.entries()) {
        await db.query(
          `INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, reference, description, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'spend test', $7)`,
          [`led_sp${i}_${tenant.id.slice(4)}`, owner.id, tenant.id, kind, micros.toString(), `spend:${tenant.id}:${i}`, at],
        );
      }
      const lastMonthSpend = formatMoney(2_000_001n + 50_000n + 3_000_003n);
      const inLastMonth = appAt(new Date(lastMonth.getTime() + 20 * 24 * HOUR));
      const inThisMonth = appAt(new Date());
      const limits = async (app: RinglaneApp) =>
        expectStatus(await request(app.app).get(`/v1/tenants/${tenant.id}/limits`).set('Authorization', bearer(owner.key)), 200).body;
      const usage = async () =>
        expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/usage?since=${lastMonth.toISOString()}&until=${thisMonth.toISOString()}`), 200).body.charges
          .total;

      // Raw; the watermark in the middle of the month; past its end (the month wholly in buckets).
      for (const rolledTo of [null, new Date(lastMonth.getTime() + 100 * HOUR + 15 * 60_000), new Date()]) {
        if (rolledTo) await rollup.run(rolledTo);
        expect((await limits(inLastMonth)).spent_this_month, `rolled to ${rolledTo?.toISOString()}`).to.equal(lastMonthSpend);
        expect(await usage()).to.equal(lastMonthSpend);
        expect((await limits(inThisMonth)).spent_this_month).to.equal('0.070000');
      }

      // The limit as last month's spend: reached then, not now.
      await setLimit(owner, tenant.id, lastMonthSpend);
      const place = (app: RinglaneApp) =>
        request(app.app)
          .post('/v1/calls')
          .set('Authorization', bearer(owner.key))
          .set('X-Tenant-Id', tenant.id)
          .send({ agent_id: tenant.agentId, contact_id: tenant.contactIds[0], simulate: { duration_seconds: 1 } });
      expectError(await place(inLastMonth), 402, 'spend_limit_reached');
      const call = expectStatus(await place(inThisMonth), 201).body;

      // The dial checks the same month: last month's engine does not dial the call; this month's does.
      const engines: Runtime[] = [createRuntime({ db, redis: redisForTests(), now: () => new Date(lastMonth.getTime() + HOUR) })];
      engines.push(createRuntime({ db, redis: redisForTests() }));
      try {
        const other = expectStatus(await place(inThisMonth), 201).body;
        await engines[0].engine.dial([other.id], new Map(), tenant.id);
        const [refused] = await db.query('SELECT status, end_reason, dialed_at FROM calls WHERE id = $1', [other.id]);
        expect(refused).to.deep.equal({ status: 'canceled', end_reason: 'spend_limit_reached', dialed_at: null });
        await engines[1].engine.dial([call.id], new Map(), tenant.id);
        const [dialed] = await db.query('SELECT status, dialed_at FROM calls WHERE id = $1', [call.id]);
        expect(dialed.status).to.equal('queued');
        expect(dialed.dialed_at).to.be.an.instanceOf(Date);
      } finally {
        await Promise.all(engines.map((r) => r.close()));
      }
    });
  });

  describe('once reached (a calls worker, the relay and a webhooks worker)', () => {
    const processes = new ServiceProcesses();
    before(() => Promise.all((['calls', 'relay', 'webhooks'] as const).map((kind) => processes.start(kind, { WEBHOOK_BACKOFF_BASE_MS: '50' }))));
    after(() => processes.stopAll());
    const receiver = receiversOfBlock();

    async function endpoint(caller: Caller, url: string, eventTypes: string[]) {
      expectStatus(await caller.post('/v1/webhook-endpoints', { name: 'Hooks', url, secret: SECRET, outcomes: [], event_types: eventTypes }), 201);
    }

    /** The thresholds `listening` got, signed, each exactly its event in the reseller's feed. */
    async function expectThresholds(owner: Reseller, listening: Receiver, tenantId: string, expected: Array<[number, string, string]>) {
      await listening.until((got) => got.length >= expected.length);
      await sleep(1000);
      const got = listening.received.map((r) => r.body).sort((a, b) => a.threshold_percent - b.threshold_percent);
      expect(got.map((b) => [b.threshold_percent, b.spent, b.limit])).to.deep.equal(expected);
      for (const body of got) {
        expect(body).to.have.all.keys('event', 'org_id', 'occurred_at', 'tenant_id', 'threshold_percent', 'spent', 'limit', 'currency', 'month');
        expect(body).to.include({ event: 'tenant.spend_threshold', org_id: owner.id, tenant_id: tenantId, currency: 'USD', month: month() });
      }
      if (got.length === 2) expect(got[0].occurred_at < got[1].occurred_at, '80 before 100').to.equal(true);
      const feed = await thresholdFeed(owner.as);
      expect(feed).to.have.lengthOf(expected.length);
      for (const r of listening.received) {
        expect(verifyRinglaneSignature(r.raw, r.headers['x-ringlane-signature'] as string, SECRET)).to.equal(true);
        expect(feed.map((e) => JSON.stringify(e.data))).to.include(r.raw.toString('utf8'));
      }
    }

    it('402 on POST /v1/calls; queued calls end canceled / spend_limit_reached with call.completed delivered; the charged text fails uncharged; 80% then 100% once each; raised, calls go on', async () => {
      const listening = await receiver();
      const notListing = await receiver();
      const tenantHooks = await receiver();
      // One call at a time; 0.60 a minute (0.01 a second), 0.05 a text; texts from the reseller's number.
      const owner = await reseller({ ceiling: { max_concurrent_calls: 1, max_calls_per_hour: 100 } });
      const number = expectStatus(await owner.as.post('/v1/phone-numbers', {}), 201).body.phone_number;
      expectStatus(await owner.as.put('/v1/sms-sender', { phone_number: number }), 200);
      const tenant = await tenantOf(owner);
      await endpoint(owner.as, listening.url, ['tenant.spend_threshold']);
      await endpoint(owner.as, notListing.url, []);
      await endpoint(tenant.inside, tenantHooks.url, ['call.completed', 'tenant.spend_threshold']);
      expect(await setLimit(owner, tenant.id, '1.00')).to.include({ monthly_spend_limit: '1.000000', spent_this_month: '0.000000' });

      // 0.80 for the call and 0.05 for its text: 85% of the limit.
      const first = expectStatus(await placeInside(tenant, { duration_seconds: 80, outcome: 'positive' }), 201).body;
      await finished(owner, tenant, [first.id]);
      expect((await limitsOf(owner, tenant.id)).spent_this_month).to.equal('0.850000');
      await listening.until((got) => got.length >= 1);

      // 25.00 for a call in progress (5 s of real time) while two more wait for its slot: it goes on
      // and is charged; they are never dialed.
      const long = expectStatus(await placeInside(tenant, { duration_seconds: 2500, outcome: 'positive' }), 201).body;
      await waitUntil(
        'the long call in progress',
        async () => (await db.query('SELECT status FROM calls WHERE id = $1', [long.id]))[0].status === 'in_progress',
        20_000,
        () => long.id,
        20,
      );
      const waiting = [];
      for (let i = 0; i < 2; i++) waiting.push(expectStatus(await placeInside(tenant, { duration_seconds: 30 }), 201).body);
      const [charged, ...canceled] = await finished(owner, tenant, [long.id, ...waiting.map((c) => c.id)]);
      expect(charged).to.include({ status: 'completed', charge: '25.000000' });
      for (const call of canceled) {
        expect(call).to.include({ status: 'canceled', end_reason: 'spend_limit_reached', charge: '0.000000', duration_seconds: 0, started_at: null });
        const events = await eventsOf(call.id);
        expect(events.map((e) => `${e.sequence}:${e.event}`)).to.deep.equal(['1:call.queued', '2:call.completed']);
        const [row] = await db.query('SELECT dialed_at FROM calls WHERE id = $1', [call.id]);
        expect(row.dialed_at, 'never dialed').to.equal(null);
      }
      expect(await limitsOf(owner, tenant.id)).to.include({ monthly_spend_limit: '1.000000', spent_this_month: '25.850000' });
      expectError(await placeInside(tenant, { duration_seconds: 1 }), 402, 'spend_limit_reached');

      // The first call's text was sent and charged; the second's is recorded failed, uncharged, and never sent.
      const texts = expectStatus(await tenant.inside.get('/v1/messages'), 200).body.data;
      expect(texts.map((t: any) => [t.call_id, t.status, t.failure_reason, t.charge])).to.deep.equal([
        [long.id, 'failed', 'spend_limit_reached', '0.000000'],
        [first.id, 'sent', null, '0.050000'],
      ]);
      const [failed] = await db.query('SELECT sent_at FROM messages WHERE call_id = $1', [long.id]);
      expect(failed.sent_at).to.equal(null);
      expect(expectStatus(await owner.as.get('/v1/balance'), 200).body.balance).to.equal('74.150000');

      // The canceled calls' call.completed reached the tenant's endpoint; the thresholds only the reseller's listing one.
      await tenantHooks.until((got) => got.filter((r) => r.body.end_reason === 'spend_limit_reached').length === 2);
      await expectThresholds(owner, listening, tenant.id, [
        [80, '0.850000', '1.000000'],
        [100, '25.850000', '1.000000'],
      ]);
      expect(tenantHooks.received.map((r) => r.body.event)).to.not.include('tenant.spend_threshold');
      expect(notListing.received.map((r) => r.body.event)).to.not.include('tenant.spend_threshold');
      expect(await thresholdFeed(tenant.inside)).to.deep.equal([]);

      // Raised: calls go on at once, and no threshold is sent again this month.
      expect(await setLimit(owner, tenant.id, '40.00')).to.include({ monthly_spend_limit: '40.000000', spent_this_month: '25.850000' });
      const again = expectStatus(await placeInside(tenant, { duration_seconds: 10 }), 201).body;
      expect((await finished(owner, tenant, [again.id]))[0]).to.include({ status: 'completed', charge: '0.100000' });
      // Removed: no limit at all.
      expect(await setLimit(owner, tenant.id, null)).to.include({ monthly_spend_limit: null, spent_this_month: '25.950000' });
      await sleep(500);
      expect(listening.received).to.have.lengthOf(2);
    });

    it('a lowered limit puts the spend past a threshold: the PATCH sends it, once; POST /v1/calls is 402 until the limit is removed', async () => {
      const listening = await receiver();
      const owner = await reseller();
      const tenant = await tenantOf(owner);
      await endpoint(owner.as, listening.url, ['tenant.spend_threshold']);
      const call = expectStatus(await placeInside(tenant, { duration_seconds: 80 }), 201).body;
      await finished(owner, tenant, [call.id]);
      expect(await limitsOf(owner, tenant.id)).to.include({ monthly_spend_limit: null, spent_this_month: '0.800000' });

      await setLimit(owner, tenant.id, '1.00'); // 80%
      await setLimit(owner, tenant.id, '0.80'); // 100%
      await setLimit(owner, tenant.id, '0.50'); // past both, sent already
      expectError(await placeInside(tenant, { duration_seconds: 1 }), 402, 'spend_limit_reached');
      await expectThresholds(owner, listening, tenant.id, [
        [80, '0.800000', '1.000000'],
        [100, '0.800000', '0.800000'],
      ]);
      await setLimit(owner, tenant.id, null);
      expectStatus(await placeInside(tenant, { duration_seconds: 1 }), 201);
    });

    it('a running campaign creates no call once the limit is reached, its contacts pending; raised, it goes on and completes', async () => {
      const owner = await reseller({ ceiling: { max_concurrent_calls: 1, max_calls_per_hour: 100 } });
      const tenant = await tenantOf(owner, 4);
      // Each call 30 s, 0.30: the first reaches the limit.
      await setLimit(owner, tenant.id, '0.30');
      const campaign = expectStatus(
        await tenant.inside.post('/v1/campaigns', {
          name: 'Reminders',
          agent_id: tenant.agentId,
          contact_ids: tenant.contactIds,
          simulate: { duration_seconds: 30 },
        }),
        201,
      ).body;
      expectStatus(await tenant.inside.patch(`/v1/campaigns/${campaign.id}`, { state: 'running' }), 200);
      const callsOf = () => db.query('SELECT status FROM calls WHERE campaign_id = $1', [campaign.id]);
      for (let i = 0; (await callsOf()).filter((c: { status: string }) => c.status === 'completed').length < 1; i++) {
        if (i > 400) throw new Error('the first campaign call never completed');
        await sleep(25);
      }
      // Several sweeps (every 5 s) and wake-ups later: still one call, the rest pending, the campaign running.
      await sleep(6000);
      expect(await callsOf()).to.deep.equal([{ status: 'completed' }]);
      const waiting = expectStatus(await tenant.inside.get(`/v1/campaigns/${campaign.id}`), 200).body;
      expect(waiting).to.include({ state: 'running' });
      expect(waiting.contacts).to.deep.equal({ total: 4, pending: 3, calling: 0, done: 1, skipped: 0 });

      await setLimit(owner, tenant.id, '100.00');
      const done = await waitForCampaignState(tenant.inside, campaign.id, 'completed', 30_000);
      expect(done.contacts).to.deep.equal({ total: 4, pending: 0, calling: 0, done: 4, skipped: 0 });
      expect((await callsOf()).map((c: { status: string }) => c.status)).to.deep.equal(['completed', 'completed', 'completed', 'completed']);
    });
  });

  describe('exact across two calls workers', () => {
    const workers: ChildProcess[] = [];
    after(async () => {
      await Promise.all(workers.splice(0).map((w) => stopProcess(w)));
    });

    const CONCURRENT = 6;

    it('many calls racing on two workers: none is dialed once the month’s spend is at or above the limit; past it, only calls already dialed are charged', async () => {
      workers.push(await startCallsWorker(), await startCallsWorker());
      const owner = await reseller({ ceiling: { max_concurrent_calls: CONCURRENT, max_calls_per_hour: 1000 } });
      const tenant = await tenantOf(owner, 100);
      // 0.01 a second, calls of 5 to 27 s: about thirty charged calls reach 5.00, six at a time, ending
      // at different moments, so dials on one worker race with endings on the other.
      await setLimit(owner, tenant.id, '5.00');
      const seconds = tenant.contactIds.map((_, i) => 5 + ((i * 7) % 23));
      const ids = await Promise.all(
        tenant.contactIds.map(async (_, i) => expectStatus(await placeInside(tenant, { duration_seconds: seconds[i] }, i), 201).body.id as string),
      );
      const calls = await finished(owner, tenant, ids);

      const rows: Array<{ id: string; dialed_at: Date | null }> = await db.query(`SELECT id, dialed_at FROM calls WHERE id = ANY($1)`, [ids]);
      const dialedAt = new Map(rows.map((r) => [r.id, r.dialed_at]));
      const dialed = calls.filter((c) => dialedAt.get(c.id) !== null);
      for (const call of calls) {
        if (dialedAt.get(call.id))
          expect(call, call.id).to.include({ status: 'completed', charge: formatMoney(BigInt(seconds[ids.indexOf(call.id)]) * 10_000n) });
        else expect(call, call.id).to.include({ status: 'canceled', end_reason: 'spend_limit_reached', charge: '0.000000' });
      }
      const spent = dialed.reduce((sum, c) => sum + parseMoney(c.charge)!, 0n);
      expect((await limitsOf(owner, tenant.id)).spent_this_month).to.equal(formatMoney(spent));
      expect(spent >= 2_500_000n, 'the limit was reached').to.equal(true);
      expect(dialed.length, 'calls dialed').to.be.below(100);

      // The 100% event is written under the tenant's row lock by the ending whose charge reached
      // the limit, stamped by the database's clock then; a dial is stamped under the same lock when
      // it is decided. So a call dialed after the spend reached the limit would be stamped after it.
      const reached = (await thresholdFeed(owner.as)).find((e) => e.data.tenant_id === tenant.id && e.data.threshold_percent === 100);
      expect(reached, 'the 100% event').to.not.equal(undefined);
      const [{ occurred_at: crossed }] = await db.query('SELECT occurred_at FROM call_events WHERE id = $1', [reached!.id]);
      const late = dialed.filter((c) => dialedAt.get(c.id)! > crossed);
      expect(
        late.map((c) => c.id),
        'calls dialed after the spend reached the limit',
      ).to.deep.equal([]);
      // Past the limit, only the calls in progress then (at most CONCURRENT, one of them the crossing's) were charged.
      const past = spent - parseMoney(reached!.data.spent)!;
      expect(past <= BigInt(CONCURRENT - 1) * 270_000n, `charged past the crossing: ${formatMoney(past)}`).to.equal(true);
    });
  });
});
