// Fault tests of webhook delivery: the webhooks worker or the relay SIGKILLed with 1,000 deliveries
// in flight, and Redis restarted mid-run, each for an organization's own endpoint and for a
// reseller-wide endpoint getting the events of five tenants (CONTRACT.md §5). Real processes,
// Postgres, Redis and HTTP receiver. Events are written straight into the outbox (one set-based
// statement), so the call engine is not involved: the relay's NOTIFY trigger fans them out.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { verifyStandardWebhook } from '../../src/webhooks/verify.js';
import { asCaller, createOrg, expectStatus, walkList, type TestOrg } from '../helpers/api.js';
import { isAlive as alive, ServiceProcesses, stopProcess, waitUntil as waitFor } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server.js';
import { createTenant, reseller } from '../helpers/tenants.js';

const SECRET = 'whsec_' + Buffer.from('fault tests: a 32-byte secret!!!').toString('base64');
const EVENTS = ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const services = new ServiceProcesses();
const start = (kind: 'relay' | 'webhooks', env: Record<string, string>) => services.start(kind, env);

/** A receiver that answers 200 after `minMs`..`maxMs`; `inFlight()` counts requests not yet answered. */
async function slowReceiver(minMs: number, maxMs: number) {
  const answerAt: number[] = [];
  const receiver = await startReceiver(() => {
    const delayMs = minMs + Math.floor(Math.random() * (maxMs - minMs + 1));
    answerAt.push(Date.now() + delayMs);
    return { status: 200, delayMs };
  });
  return Object.assign(receiver, { inFlight: () => answerAt.filter((t) => t > Date.now()).length });
}

/**
 * Whose events, delivered where: `owner` has the one endpoint, and owns the deliveries; the events
 * are those of `orgIds` (the owner itself, or its tenants), all of the owner's account.
 */
interface Subject {
  owner: TestOrg;
  orgIds: string[];
  /** The tenant a delivery of an event of `orgId` names (X-Ringlane-Tenant-Id, `tenant_id`), or null. */
  tenantOf(orgId: string): string | null;
}

/** The two shapes of delivery under test: an organization's own endpoint, and a reseller's over its tenants. */
const SHAPES: Array<{ name: string; subject(url: string): Promise<Subject> }> = [
  {
    name: 'an organization’s endpoint',
    async subject(url) {
      const owner = await createOrg({ name: 'Webhook faults' });
      expectStatus(await asCaller(owner.key).post('/v1/webhook-endpoints', { name: 'Faults', url, secret: SECRET, outcomes: [] }), 201);
      return { owner, orgIds: [owner.id], tenantOf: () => null };
    },
  },
  {
    name: 'a reseller-wide endpoint over five tenants',
    async subject(url) {
      const owner = await reseller({ name: 'Webhook faults reseller' });
      const orgIds: string[] = [];
      for (let i = 0; i < 5; i++) orgIds.push((await createTenant(owner, { name: `Tenant ${i}` })).id);
      expectStatus(await owner.as.post('/v1/webhook-endpoints', { name: 'Faults', url, secret: SECRET, outcomes: [], tenant_events: 'all' }), 201);
      return { owner, orgIds, tenantOf: (orgId) => orgId };
    },
  },
];

/**
 * Writes `calls` completed calls, spread over the subject's organizations, each with its four
 * events, in one statement (the NOTIFY trigger wakes the relay once). Returns the number of
 * events written.
 */
async function insertEvents({ owner, orgIds }: Subject, calls: number): Promise<number> {
  const tag = randomBytes(5).toString('hex');
  await db.query(
    `WITH c AS (
       INSERT INTO calls (id, org_id, payer_org_id, agent_id, direction, status, outcome, end_reason, phone_number, simulate, last_sequence)
       SELECT 'call_flt' || $2 || '_' || i, ($5::varchar[])[1 + i % cardinality($5::varchar[])], $1, 'agt_faults', 'outbound', 'completed', 'neutral', 'completed', '+14155550100', '{}'::jsonb, 4
         FROM generate_series(1, $3::int) AS i
       RETURNING id, org_id, payer_org_id)
     INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at)
     SELECT 'cev_' || c.id || '_' || e.seq, c.id, c.org_id, c.payer_org_id, e.seq, e.name,
            jsonb_build_object('event', e.name, 'call_id', c.id, 'org_id', c.org_id, 'sequence', e.seq,
                               'status', CASE WHEN e.seq = 4 THEN 'completed' ELSE 'in_progress' END,
                               'occurred_at', iso_utc(now()), 'outcome', CASE WHEN e.seq = 4 THEN 'neutral' END),
            now()
       FROM c CROSS JOIN unnest($4::text[]) WITH ORDINALITY AS e(name, seq)`,
    [owner.id, tag, calls, EVENTS, orgIds],
  );
  return calls * EVENTS.length;
}

async function statusCounts(org: TestOrg): Promise<Record<string, number>> {
  const rows: Array<{ status: string; n: number }> = await db.query(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE org_id = $1 GROUP BY status',
    [org.id],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function deliveryCount(org: TestOrg): Promise<number> {
  const [{ n }] = await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE org_id = $1', [org.id]);
  return n;
}

/** Polls until `check` holds; on timeout the error shows `describe()` and the processes' logs. */
const waitUntil = (what: string, check: () => Promise<boolean>, timeoutMs: number, describe: () => Promise<unknown>, pollMs = 100) =>
  waitFor(what, check, timeoutMs, async () => `${JSON.stringify(await describe())}\n${services.tails()}`, pollMs);

/** Every delivery of `org` succeeded: `total` of them. */
async function waitAllSucceeded(org: TestOrg, total: number, timeoutMs: number): Promise<void> {
  await waitUntil(
    `all ${total} deliveries succeeded`,
    async () => (await statusCounts(org)).succeeded === total,
    timeoutMs,
    () => statusCounts(org),
    200,
  );
}

/**
 * What the receiver and the delivery log must show in the end: one delivery per event, every
 * delivery received at least once (by `webhook-id`, and every event by call and sequence), signed,
 * naming its tenant exactly when the event is a tenant's; and GET /v1/webhook-deliveries, walked
 * page by page, shows every one `succeeded`, with its `tenant_id`.
 */
async function expectAllDelivered(subject: Subject, receiver: Receiver, events: number): Promise<void> {
  const { owner } = subject;
  const [counts] = await db.query(
    `SELECT count(*)::int AS events, count(d.id)::int AS deliveries, count(DISTINCT d.event_id)::int AS distinct_events,
            count(*) FILTER (WHERE ev.relayed_at IS NULL)::int AS unrelayed
       FROM call_events ev LEFT JOIN webhook_deliveries d ON d.event_id = ev.id
      WHERE ev.account_id = $1`,
    [owner.id],
  );
  expect(counts).to.deep.equal({ events, deliveries: events, distinct_events: events, unrelayed: 0 });

  const deliveries: Array<{ id: string; call_id: string; sequence: number }> = await db.query(
    'SELECT d.id, ev.call_id, ev.sequence FROM webhook_deliveries d JOIN call_events ev ON ev.id = d.event_id WHERE d.org_id = $1',
    [owner.id],
  );
  const receivedIds = new Set(receiver.received.map((r) => r.headers['webhook-id']));
  const missing = deliveries.filter((d) => !receivedIds.has(d.id));
  expect(missing.length, `deliveries never received, e.g. ${JSON.stringify(missing.slice(0, 5))}`).to.equal(0);
  const receivedEvents = new Set(receiver.received.map((r) => `${r.body.call_id}#${r.body.sequence}`));
  expect(deliveries.filter((d) => !receivedEvents.has(`${d.call_id}#${d.sequence}`))).to.deep.equal([]);
  const wrong = receiver.received.filter(
    (r) => !verifyStandardWebhook(r.raw, r.headers, SECRET) || (r.headers['x-ringlane-tenant-id'] ?? null) !== subject.tenantOf(r.body.org_id),
  );
  expect(wrong.length, `unsigned, or naming the wrong tenant, e.g. ${JSON.stringify(wrong.slice(0, 2).map((r) => [r.headers, r.body]))}`).to.equal(0);

  const { items } = await walkList(asCaller(owner.key), '/v1/webhook-deliveries', 100);
  expect(items).to.have.lengthOf(events);
  expect(new Set(items.map((d: any) => d.id)).size).to.equal(events);
  const notSucceeded = items.filter((d: any) => d.status !== 'succeeded');
  expect(notSucceeded.length, JSON.stringify(notSucceeded.slice(0, 3))).to.equal(0);
  const tenants = new Set(subject.orgIds.map((id) => subject.tenantOf(id)));
  for (const d of items) {
    expect(d.attempts.length).to.be.at.least(1);
    expect(d.attempts.at(-1).response_status).to.equal(200);
    expect(tenants.has(d.tenant_id), JSON.stringify(d)).to.equal(true);
  }
}

describe('webhook delivery under faults (real processes, SIGKILL, Redis restart)', function () {
  this.timeout(90_000);
  const receivers: Receiver[] = [];
  const redisServers: PrivateRedis[] = [];

  afterEach(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await Promise.all(redisServers.splice(0).map((r) => r.stop()));
  });

  for (const shape of SHAPES) {
    it(`${shape.name}: SIGKILL of the webhooks worker with deliveries in flight: a new worker gets every delivery through (at least once), all succeeded`, async () => {
      const receiver = await slowReceiver(20, 50);
      receivers.push(receiver);
      const subject = await shape.subject(receiver.url);
      const org = subject.owner;
      // Every job the worker runs at once may be POSTing to this one endpoint.
      const env = { WEBHOOK_ENDPOINT_CONCURRENCY: '100' };
      const relay = await start('relay', env);
      const worker = await start('webhooks', env);

      const total = await insertEvents(subject, 250);
      expect(total).to.equal(1000);
      await receiver.until((all) => all.length >= 150, 30_000);
      // Killed while the receiver holds several unanswered: between two claims of the worker few
      // may be out (1 was, once, in CI), and then this test would show nothing.
      let inFlight = 0;
      await waitFor(
        '5 requests in flight',
        async () => (inFlight = receiver.inFlight()) >= 5,
        30_000,
        () => inFlight,
        2,
      );
      await stopProcess(worker.child, 'SIGKILL');
      const atKill = await statusCounts(org);
      expect(inFlight, 'requests the receiver had not answered when the worker died').to.be.at.least(5);
      expect(atKill.succeeded ?? 0, JSON.stringify(atKill)).to.be.below(total);

      const restarted = await start('webhooks', env);
      await waitAllSucceeded(org, total, 75_000);
      await expectAllDelivered(subject, receiver, total);
      expect(alive(relay) && alive(restarted)).to.equal(true);
    });

    it(`${shape.name}: SIGKILL of the relay mid-fan-out: after a restart, exactly one delivery per event, all succeeded`, async () => {
      const receiver = await slowReceiver(0, 5);
      receivers.push(receiver);
      const subject = await shape.subject(receiver.url);
      const org = subject.owner;
      const relay = await start('relay', {});
      const worker = await start('webhooks', {});

      // 1,000 events in 25 statements of 40, while the relay fans them out; it dies part-way.
      let written = 0;
      const writer = (async () => {
        for (let i = 0; i < 25; i++) {
          written += await insertEvents(subject, 10);
          await sleep(40);
        }
      })();
      let atKill: number;
      try {
        await waitUntil(
          'some deliveries',
          async () => (await deliveryCount(org)) >= 40,
          20_000,
          () => statusCounts(org),
          5,
        );
        await stopProcess(relay.child, 'SIGKILL');
        atKill = await deliveryCount(org);
      } finally {
        await writer;
      }
      expect(written).to.equal(1000);
      expect(atKill).to.be.above(0).and.below(1000);

      const restarted = await start('relay', {});
      await waitAllSucceeded(org, 1000, 75_000);
      await expectAllDelivered(subject, receiver, 1000);
      expect(alive(restarted) && alive(worker)).to.equal(true);
    });

    it(`${shape.name}: Redis killed mid-run and restarted empty: delivering needs no Redis, and every delivery succeeds`, async () => {
      const redis = await startPrivateRedis();
      redisServers.push(redis);
      const receiver = await slowReceiver(10, 30);
      receivers.push(receiver);
      const subject = await shape.subject(receiver.url);
      const org = subject.owner;
      const env = { ...redis.env, WEBHOOK_ENDPOINT_CONCURRENCY: '100' };
      const relay = await start('relay', env);
      const worker = await start('webhooks', env);

      const first = await insertEvents(subject, 250);
      await receiver.until((all) => all.length >= 200, 30_000);
      await redis.kill();
      const atKill = await statusCounts(org);
      expect(atKill.succeeded ?? 0, JSON.stringify(atKill)).to.be.below(first);

      // While Redis is down: new events still become deliveries (Postgres is the source of truth).
      await sleep(500);
      const second = await insertEvents(subject, 50);
      const total = first + second;
      await waitUntil(
        'events written while Redis is down become deliveries',
        async () => (await deliveryCount(org)) === total,
        20_000,
        () => statusCounts(org),
      );
      await sleep(1000);
      expect(alive(relay) && alive(worker), 'relay and worker survive Redis going away').to.equal(true);

      await redis.restart();
      await waitAllSucceeded(org, total, 60_000);
      await expectAllDelivered(subject, receiver, total);
      expect(alive(relay) && alive(worker)).to.equal(true);
    });
  }
});
