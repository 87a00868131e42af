// Events as receivers get them (CONTRACT.md §4 "Events feed", "Event types and endpoint
// filters"), with real processes (calls worker, relay, webhooks worker) and real receivers:
// the feed's `data` is the delivered body before customization, every delivery names its
// event, `event_types` decides which endpoint gets what, and each operational event is
// delivered signed to the endpoints that list it and shown in the feed.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import { createPool } from '../../src/lib/db.js';
import { AttemptsRepository, type RecordedAttempt } from '../../src/webhooks/attempts.repository.js';
import { db } from '../helpers/db.js';
import { verifyRinglaneSignature, verifyStandardWebhook } from '../../src/webhooks/verify.js';
import { asCaller, expectStatus, operatorPatchOrg, type Caller, type TestOrg } from '../helpers/api.js';
import { startService, waitUntil } from '../helpers/processes.js';
import { receiversOfBlock, type Received, type Receiver } from '../helpers/receiver.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { placeCall, startCallsWorker, stopProcess, uniquePhone, voiceOrg, waitForCalls } from '../helpers/voice.js';

const SECRET = 'whsec_' + Buffer.from('events: a test secret of 32 byte').toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function endpoint(caller: Caller, url: string, fields: Record<string, unknown> = {}) {
  return expectStatus(await caller.post('/v1/webhook-endpoints', { name: 'Hooks', url, secret: SECRET, outcomes: [], ...fields }), 201).body;
}

/** Every event of the caller's feed with `query`. */
const feed = async (caller: Caller, query = '') => expectStatus(await caller.get(`/v1/events?limit=100${query ? `&${query}` : ''}`), 200).body.data;

/** The request is signed with SECRET both ways (X-Ringlane-Signature and Standard Webhooks). */
function expectSigned(r: Received): void {
  expect(verifyRinglaneSignature(r.raw, r.headers['x-ringlane-signature'] as string, SECRET), 'X-Ringlane-Signature').to.equal(true);
  expect(verifyStandardWebhook(r.raw, r.headers, SECRET), 'webhook-signature').to.equal(true);
}

const setThreshold = (org: TestOrg, threshold: string) => operatorPatchOrg(org.id, { low_balance_threshold: threshold });

describe('events delivered: the feed’s data, event_types, operational events (real processes)', function () {
  this.timeout(90_000);
  const processes: ChildProcess[] = [];
  before(async () => {
    const env = { WEBHOOK_BACKOFF_BASE_MS: '50' };
    const [calls, relay, webhooks] = await Promise.all([startCallsWorker(), startService('relay', env), startService('webhooks', env)]);
    processes.push(calls, relay.child, webhooks.child);
  });
  after(async () => {
    await Promise.all(processes.map((p) => stopProcess(p)));
  });
  const receiver = receiversOfBlock();

  /**
   * The one `webhook_endpoint.disabled` the watcher gets (nothing else comes within a while),
   * signed, about `endpointId` with `reason` and `lastError`, also in the feed; the endpoint is
   * disabled. Returns the received request and the feed's event.
   */
  async function expectDisabledOnce(watcher: Receiver, org: TestOrg, endpointId: string, reason: string, lastError: string) {
    const caller = asCaller(org.key);
    await watcher.until((got) => got.length >= 1);
    await sleep(1500);
    expect(watcher.received).to.have.lengthOf(1);
    const [r] = watcher.received;
    expectSigned(r);
    expect(r.body).to.include({ event: 'webhook_endpoint.disabled', org_id: org.id, endpoint_id: endpointId, reason, last_error: lastError });
    const events = await feed(caller, 'type=webhook_endpoint.disabled');
    expect(events.map((e: any) => e.data.endpoint_id)).to.deep.equal([endpointId]);
    expect(expectStatus(await caller.get(`/v1/webhook-endpoints/${endpointId}`), 200).body.disabled).to.equal(true);
    return { r, event: events[0] };
  }

  it('an event’s data is byte for byte the body an endpoint without customization receives; every delivery names its event_id', async () => {
    const plain = await receiver();
    const custom = await receiver();
    const org = await voiceOrg();
    const caller = asCaller(org.key);
    const plainHook = await endpoint(caller, plain.url);
    await endpoint(caller, custom.url, { field_aliases: { call_id: 'callId' }, extra_payload: { source: 'crm' } });
    const call = await placeCall(org, { duration_seconds: 2, outcome: 'neutral' });
    await plain.until((all) => all.length >= 4);
    await custom.until((all) => all.length >= 4);

    const deliveries = expectStatus(await caller.get('/v1/webhook-deliveries?limit=100'), 200).body.data;
    expect(deliveries).to.have.lengthOf(8);
    for (const r of plain.received) {
      const delivery = deliveries.find((d: any) => d.id === r.headers['webhook-id']);
      expect(delivery.endpoint_id).to.equal(plainHook.id);
      expect(delivery.event_id).to.match(/^evt_[0-9A-Za-z]{22}$/);
      const event = expectStatus(await caller.get(`/v1/events/${delivery.event_id}`), 200).body;
      expect(event.type).to.equal(delivery.event);
      expect(JSON.stringify(event.data)).to.equal(r.raw.toString('utf8'));
    }
    // The customized endpoint got the same events, renamed and added to: `data` is before that.
    for (const r of custom.received) {
      const delivery = deliveries.find((d: any) => d.id === r.headers['webhook-id']);
      const { data } = expectStatus(await caller.get(`/v1/events/${delivery.event_id}`), 200).body;
      const { call_id: callId, ...rest } = data;
      expect(r.body).to.deep.equal({ ...rest, callId, source: 'crm' });
    }
    // Two deliveries of each event, one per endpoint, each naming it.
    const byEvent = new Map<string, string[]>();
    for (const d of deliveries) byEvent.set(d.event_id, [...(byEvent.get(d.event_id) ?? []), d.endpoint_id]);
    expect([...byEvent.values()].map((endpoints) => endpoints.length)).to.deep.equal([2, 2, 2, 2]);
    // A receiver that was down reads the same events from the feed.
    const events = await feed(caller, `call_id=${call.id}`);
    expect(events.map((e: any) => e.type).sort()).to.deep.equal(['call.completed', 'call.in_progress', 'call.queued', 'call.ringing']);
    expect(new Set(events.map((e: any) => e.id))).to.deep.equal(new Set(byEvent.keys()));
  });

  it('event_types: [] gets every call event and no operational one; a listed operational event goes only where listed; outcomes filter call events only', async () => {
    const all = await receiver();
    const completedPositive = await receiver();
    const lowOnly = await receiver();
    const org = await voiceOrg({ contacts: 2 });
    const caller = asCaller(org.key);
    await endpoint(caller, all.url, { event_types: [] });
    await endpoint(caller, completedPositive.url, { event_types: ['call.completed', 'balance.low'], outcomes: ['positive'] });
    await endpoint(caller, lowOnly.url, { event_types: ['balance.low'], outcomes: ['negative'] });

    const positive = await placeCall(org, { duration_seconds: 1, outcome: 'positive' });
    const negative = await placeCall(org, { duration_seconds: 1, outcome: 'negative' }, org.contactIds[1]);
    await waitForCalls(org, [positive.id, negative.id]);
    await all.until((got) => got.length >= 8);
    await completedPositive.until((got) => got.length >= 1);
    await setThreshold(org, '1000.00');
    await completedPositive.until((got) => got.length >= 2);
    await lowOnly.until((got) => got.length >= 1);
    await sleep(1000);

    expect(all.received.map((r) => r.body.event).sort()).to.deep.equal(
      ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'].flatMap((e) => [e, e]).sort(),
    );
    expect(completedPositive.received.map((r) => [r.body.event, r.body.call_id ?? null])).to.deep.equal([
      ['call.completed', positive.id],
      ['balance.low', null],
    ]);
    expect(lowOnly.received.map((r) => r.body.event)).to.deep.equal(['balance.low']);
    const [low] = await feed(caller, 'type=balance.low');
    for (const r of [completedPositive.received[1], lowOnly.received[0]]) {
      expectSigned(r);
      expect(r.raw.toString('utf8')).to.equal(JSON.stringify(low.data));
    }
    expect(low.data).to.include({ event: 'balance.low', org_id: org.id, currency: 'USD', threshold: '1000.000000' });
  });

  it('webhook_endpoint.disabled on 410 Gone: reason gone with the last error, once, signed, to the endpoints listing it, and in the feed', async () => {
    const gone = await receiver(() => ({ status: 410 }));
    const watcher = await receiver();
    const org = await voiceOrg();
    const caller = asCaller(org.key);
    const goneHook = await endpoint(caller, gone.url);
    await endpoint(caller, watcher.url, { event_types: ['webhook_endpoint.disabled'] });
    await placeCall(org, { duration_seconds: 1 });
    const { r, event } = await expectDisabledOnce(watcher, org, goneHook.id, 'gone', 'HTTP 410 Gone: the endpoint is disabled');
    expect(r.body).to.have.all.keys('event', 'org_id', 'occurred_at', 'endpoint_id', 'reason', 'last_error');
    expect(JSON.stringify(event.data)).to.equal(r.raw.toString('utf8'));
    const [delivery] = expectStatus(await caller.get('/v1/webhook-deliveries?event=webhook_endpoint.disabled'), 200).body.data;
    expect(delivery).to.include({ event_id: event.id, event: 'webhook_endpoint.disabled', call_id: null, sequence: null, status: 'succeeded' });
  });

  it('webhook_endpoint.disabled after WEBHOOK_DISABLE_AFTER_HOURS of failures: reason failing; switching an endpoint off by hand sends none', async () => {
    const failing = await receiver(() => ({ status: 500 }));
    const watcher = await receiver();
    const org = await voiceOrg();
    const caller = asCaller(org.key);
    const failingHook = await endpoint(caller, failing.url);
    const byHand = await endpoint(caller, 'http://127.0.0.1:9/never');
    await endpoint(caller, watcher.url, { event_types: ['webhook_endpoint.disabled'] });
    expectStatus(await caller.patch(`/v1/webhook-endpoints/${byHand.id}`, { disabled: true }), 200);
    // Failing for 121 hours already (the default is 120): the next failure disables it.
    await db.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours' WHERE id = $1`, [failingHook.id]);
    await placeCall(org, { duration_seconds: 1 });
    await expectDisabledOnce(watcher, org, failingHook.id, 'failing', 'HTTP 500');
  });

  it('tenant.disabled and tenant.enabled go to the reseller’s own endpoints that list them, signed; never to the tenant’s', async () => {
    const resellerHooks = await receiver();
    const unlisted = await receiver();
    const tenantHooks = await receiver();
    const owner = await reseller();
    const tenant = await createTenant(owner);
    await endpoint(owner.as, resellerHooks.url, { event_types: ['tenant.disabled', 'tenant.enabled'] });
    await endpoint(owner.as, unlisted.url);
    await endpoint(owner.inside(tenant.id), tenantHooks.url, { event_types: ['tenant.disabled', 'tenant.enabled'] });
    expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 200);
    expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: false }), 200);
    await resellerHooks.until((got) => got.length >= 2);
    await sleep(1000);

    const bodies = resellerHooks.received.map((r) => r.body).sort((a, b) => (a.event < b.event ? -1 : 1));
    expect(bodies.map((b) => [b.event, b.org_id, b.tenant_id])).to.deep.equal([
      ['tenant.disabled', owner.id, tenant.id],
      ['tenant.enabled', owner.id, tenant.id],
    ]);
    resellerHooks.received.forEach(expectSigned);
    expect(unlisted.received).to.deep.equal([]);
    expect(tenantHooks.received).to.deep.equal([]);
    const events = await feed(owner.as);
    expect(events.map((e: any) => e.type).sort()).to.deep.equal(['tenant.disabled', 'tenant.enabled']);
  });

  it('balance.low from a tenant’s call charge is the paying reseller’s: its feed and its endpoints, not the tenant’s', async () => {
    const resellerHooks = await receiver();
    const tenantHooks = await receiver();
    // 0.60 a minute: a 10 s call costs 0.10, taking 1.00 below 0.95.
    const owner = await reseller({ balance: '1.00' });
    const tenant = await createTenant(owner);
    const inside = owner.inside(tenant.id);
    await setThreshold(owner, '0.95');
    await endpoint(owner.as, resellerHooks.url, { event_types: ['balance.low'] });
    await endpoint(inside, tenantHooks.url, { event_types: ['balance.low'] });
    const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
    const contact = expectStatus(await inside.post('/v1/contacts', { name: 'Pat', phone_number: uniquePhone() }), 201).body;
    const call = expectStatus(
      await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate: { duration_seconds: 10, outcome: 'neutral' } }),
      201,
    ).body;
    await waitForCalls(owner, [call.id], 20_000, { 'X-Tenant-Id': tenant.id });
    await resellerHooks.until((got) => got.length >= 1);
    await sleep(1000);

    expect(resellerHooks.received).to.have.lengthOf(1);
    expectSigned(resellerHooks.received[0]);
    expect(resellerHooks.received[0].body).to.include({ event: 'balance.low', org_id: owner.id, balance: '0.900000', currency: 'USD', threshold: '0.950000' });
    expect(tenantHooks.received).to.deep.equal([]);
    expect(await feed(inside, 'type=balance.low')).to.deep.equal([]);
    await waitUntil(
      'the event is in the reseller’s feed',
      async () => (await feed(owner.as, 'type=balance.low')).length === 1,
      5000,
      () => 'none',
    );
  });
});

describe('the recording statement writes webhook_endpoint.disabled only for the endpoints it disables', () => {
  let pool: pg.Pool;
  before(() => {
    pool = createPool(1);
  });
  after(async () => {
    await pool.end();
  });

  /** A failed attempt of a delivery that does not exist: the statement still keeps its endpoint's streak. */
  const failed = (endpointId: string, gone: boolean, error: string, attemptedAt = new Date()): RecordedAttempt => ({
    deliveryId: 'dlv_none',
    deliveryCreatedAt: new Date(),
    endpointId,
    attemptId: randomUUID(),
    attemptedAt,
    responseStatus: gone ? 410 : 500,
    durationMs: 5,
    error,
    responseBody: null,
    status: gone ? 'failed' : 'retrying',
    nextAttemptAt: gone ? null : new Date(Date.now() + 60_000),
    endpointGone: gone,
  });
  const disabledEvents = async (org: TestOrg) => feed(asCaller(org.key), 'type=webhook_endpoint.disabled');

  it('once per disabling: an endpoint disabled already (another batch, another worker) gets no second event; enabled and failing again, a new one', async () => {
    const repository = new AttemptsRepository(pool);
    const org = await voiceOrg();
    const caller = asCaller(org.key);
    const hook = await endpoint(caller, 'http://127.0.0.1:9/hooks');

    // One batch: a 500, then the 410 that disables it; the event says why, with the 410's error.
    const earlier = new Date(Date.now() - 1000);
    expect(
      await repository.record([failed(hook.id, true, 'HTTP 410 Gone: the endpoint is disabled'), failed(hook.id, false, 'HTTP 500', earlier)], 120),
    ).to.deep.equal([hook.id]);
    // A later batch (a delivery that was in flight) answers 410 too: disabled already, no event.
    expect(await repository.record([failed(hook.id, true, 'HTTP 410 Gone: the endpoint is disabled')], 120)).to.deep.equal([hook.id]);
    let events = await disabledEvents(org);
    expect(events.map((e: any) => [e.data.endpoint_id, e.data.reason, e.data.last_error])).to.deep.equal([
      [hook.id, 'gone', 'HTTP 410 Gone: the endpoint is disabled'],
    ]);

    // Enabled again, failing under the threshold: nothing; past it: reason failing, the latest error.
    expectStatus(await caller.patch(`/v1/webhook-endpoints/${hook.id}`, { disabled: false }), 200);
    expect(await repository.record([failed(hook.id, false, 'timeout after 10000 ms')], 120)).to.deep.equal([]);
    await db.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours' WHERE id = $1`, [hook.id]);
    expect(await repository.record([failed(hook.id, false, 'HTTP 502', earlier), failed(hook.id, false, 'HTTP 503')], 120)).to.deep.equal([hook.id]);
    events = await disabledEvents(org);
    expect(events.map((e: any) => [e.data.reason, e.data.last_error])).to.deep.equal([
      ['failing', 'HTTP 503'],
      ['gone', 'HTTP 410 Gone: the endpoint is disabled'],
    ]);
  });
});
