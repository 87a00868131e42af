import type { ChildProcess } from 'node:child_process';
import { Worker, type Job } from 'bullmq';
import { expect } from 'chai';
import request from 'supertest';
import { TERMINAL_STATUSES } from '../../src/calls/call.entity.js';
import { localClock } from '../../src/campaigns/calling-hours.js';
import { queuePrefix } from '../../src/lib/queues.js';
import { createRedis, type RedisClient } from '../../src/lib/redis.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { callsProcessors } from '../../workers/processors/calls.processor.js';
import { db } from './db.js';
import { app, bearer, createOrg, expectStatus, type Caller, type TestOrg } from './api.js';
import { startService, stopProcess } from './processes.js';
import { redisForTests } from './redis.js';

/** Starts a real `calls` worker process; resolves once it is consuming jobs. */
export async function startCallsWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  return (await startService('calls', env)).child;
}

export { stopProcess };

export interface VoiceOrg extends TestOrg {
  agentId: string;
  contactIds: string[];
}

/**
 * Where test contacts live. A campaign calls a contact only between 08:00 and 21:00 in the
 * contact's local time, taken from its number (CONTRACT.md §4), so a test that runs a campaign on
 * the real clock needs contacts where it is daytime, whenever it runs: numbering areas around the
 * world (each one zone in libphonenumber's data, no two more than 3 hours apart, summer time or
 * not), and the digits that come before the 7 that make a number unique.
 */
const PLACES = [
  { zone: 'Pacific/Honolulu', prefix: '+1808', lead: '' },
  { zone: 'America/Los_Angeles', prefix: '+1415', lead: '' },
  { zone: 'America/Chicago', prefix: '+1312', lead: '' },
  { zone: 'America/New_York', prefix: '+1212', lead: '' },
  { zone: 'America/Sao_Paulo', prefix: '+5511', lead: '95' },
  { zone: 'Atlantic/Cape_Verde', prefix: '+2382', lead: '' },
  { zone: 'Europe/London', prefix: '+4420', lead: '7' },
  { zone: 'Europe/Berlin', prefix: '+4930', lead: '1' },
  { zone: 'Europe/Moscow', prefix: '+7495', lead: '' },
  { zone: 'Asia/Dubai', prefix: '+9714', lead: '' },
  { zone: 'Asia/Kolkata', prefix: '+9122', lead: '2' },
  { zone: 'Asia/Bangkok', prefix: '+662', lead: '' },
  { zone: 'Asia/Shanghai', prefix: '+8610', lead: '6' },
  { zone: 'Asia/Tokyo', prefix: '+813', lead: '1' },
  { zone: 'Australia/Sydney', prefix: '+612', lead: '9' },
  { zone: 'Pacific/Auckland', prefix: '+649', lead: '' },
];

/** Minutes from `time` ("HH:MM") to 14:30, the middle of 08:00–21:00, around the clock. */
function fromMidday(time: string): number {
  const minutes = Number(time.slice(0, 2)) * 60 + Number(time.slice(3)) - (14 * 60 + 30);
  return Math.min(Math.abs(minutes), 24 * 60 - Math.abs(minutes));
}

let phoneCounter = 0;
/**
 * A unique E.164 number for this run, of the place (PLACES) where it is now closest to 14:30
 * (at most 1.5 hours away): a campaign may call it for the next 5 hours at least.
 */
export function uniquePhone(): string {
  const at = new Date();
  const place = PLACES.reduce((best, p) => (fromMidday(localClock(at, p.zone).time) < fromMidday(localClock(at, best.zone).time) ? p : best));
  return `${place.prefix}${place.lead}${String(process.pid % 1000).padStart(3, '0')}${String(phoneCounter++).padStart(4, '0')}`;
}

/**
 * An organization with money, rates, one agent and `contacts` contacts, made through the API: the
 * shared app's, or a real web process's at `baseUrl`.
 */
export async function voiceOrg(options: { contacts?: number; fields?: Record<string, unknown>; baseUrl?: string } = {}): Promise<VoiceOrg> {
  const org = await createOrg({ balance: '100.00', rates: { per_minute: '0.120000', per_text: '0.010000' }, ...options.fields }, options.baseUrl);
  const api = options.baseUrl ?? (await app());
  const agent = await request(api).post('/v1/agents').set('Authorization', bearer(org.key)).send({ name: 'Ava' }).expect(201);
  const contactIds: string[] = [];
  for (let i = 0; i < (options.contacts ?? 1); i++) {
    const contact = await request(api)
      .post('/v1/contacts')
      .set('Authorization', bearer(org.key))
      .send({ name: `Contact ${i}`, phone_number: uniquePhone() })
      .expect(201);
    contactIds.push(contact.body.id);
  }
  return { ...org, agentId: agent.body.id, contactIds };
}

/** POST /v1/calls to a real web process on `port` (not the in-process app); expects 201 and returns the call's id. */
export async function placeCallThrough(port: number, org: VoiceOrg, simulate: Record<string, unknown>): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: org.agentId, contact_id: org.contactIds[0], simulate }),
  });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).to.equal(201);
  return body.id;
}

/** POST /v1/calls; expects 201 and returns the call. */
export async function placeCall(org: VoiceOrg, simulate: Record<string, unknown> = {}, contactId = org.contactIds[0]) {
  const res = await request(await app())
    .post('/v1/calls')
    .set('Authorization', bearer(org.key))
    .send({ agent_id: org.agentId, contact_id: contactId, simulate });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body;
}

const TERMINAL: readonly string[] = TERMINAL_STATUSES;

/** Rows of a query on some database: the run's (`db.query`), or a server of the test's own. */
export type Query = (sql: string, values: unknown[]) => Promise<any[]>;

/**
 * Each call charged exactly once, by exactly its recorded charge, and a call recorded uncharged
 * (never answered) not at all: the ledger's call lines compared with the calls.
 */
export async function expectChargedOnce(query: Query, calls: Array<{ id: string; status: string; charge: string }>): Promise<void> {
  const ledger: Array<{ reference: string; n: number; amount: string }> = await query(
    `SELECT reference, count(*)::int AS n, (-sum(amount_micros))::text AS amount FROM ledger_entries WHERE kind = 'call' AND reference = ANY($1) GROUP BY reference`,
    [calls.map((c) => `call:${c.id}`)],
  );
  const charged = new Map(ledger.map((l) => [l.reference.slice('call:'.length), l]));
  for (const call of calls) {
    const entry = charged.get(call.id);
    if (call.charge === '0') expect(entry, `${call.id} (${call.status}) is not charged`).to.equal(undefined);
    else expect(entry, `${call.id} charged once`).to.deep.include({ n: 1, amount: call.charge });
  }
}

/** Polls until every call is in a terminal status; returns them as the API shows them. */
export async function waitForCalls(org: TestOrg, ids: string[], timeoutMs = 20_000, headers: Record<string, string> = {}): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.query(`SELECT id, status FROM calls WHERE id = ANY($1)`, [ids]);
    if (rows.length === ids.length && rows.every((r: { status: string }) => TERMINAL.includes(r.status))) break;
    if (Date.now() > deadline) throw new Error(`calls not finished: ${JSON.stringify(rows.filter((r: { status: string }) => !TERMINAL.includes(r.status)))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const api = await app();
  return Promise.all(ids.map(async (id) => (await request(api).get(`/v1/calls/${id}`).set('Authorization', bearer(org.key)).set(headers).expect(200)).body));
}

/** The outbox rows of a call, in sequence order. */
export async function eventsOf(callId: string): Promise<Array<{ sequence: number; event: string; occurred_at: Date; payload: any }>> {
  return db.query('SELECT sequence, event, occurred_at, payload FROM call_events WHERE call_id = $1 ORDER BY sequence', [callId]);
}

/**
 * Each call's span from its event `from` to its event `to` (their `occurred_at`), for calls
 * that went queued → ringing → in progress → completed.
 */
export async function spans(callIds: string[], from: string, to: string): Promise<Array<[number, number]>> {
  return Promise.all(
    callIds.map(async (id) => {
      const events = await eventsOf(id);
      expect(
        events.map((e) => `${e.sequence}:${e.event}`),
        id,
      ).to.deep.equal(['1:call.queued', '2:call.ringing', '3:call.in_progress', '4:call.completed']);
      const at = (event: string) => events.find((e) => e.event === event)!.occurred_at.getTime();
      return [at(from), at(to)] as [number, number];
    }),
  );
}

/** The most spans open at one instant (one ending when another starts counts once). */
export function maxOverlap(spans: Array<[number, number]>): number {
  const edges = spans
    .flatMap(
      ([from, to]) =>
        [
          [from, 1],
          [to, -1],
        ] as const,
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (open += delta));
  return most;
}

/** Polls a campaign through the API until it is in `state`; returns it. */
export async function waitForCampaignState(caller: Caller, id: string, state: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const campaign = expectStatus(await caller.get(`/v1/campaigns/${id}`), 200).body;
    if (campaign.state === state) return campaign;
    if (Date.now() > deadline) throw new Error(`campaign still ${campaign.state}: ${JSON.stringify(campaign.contacts)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function balanceOf(org: TestOrg): Promise<string> {
  return (
    await request(await app())
      .get('/v1/balance')
      .set('Authorization', bearer(org.key))
      .expect(200)
  ).body.balance;
}

/**
 * A `calls` worker in this process for the enclosing `describe` block, over a runtime whose clock
 * (createRuntime's `now`) is `clock.at`, which the test sets: campaigns judge calling windows at
 * that moment, and everything else runs on the real clock. No other calls worker may run
 * meanwhile (it would take the jobs); `runtime()` is the worker's, to look at its queue.
 */
export function withCallsWorkerAt(clock: { at: Date }): { runtime: () => Runtime } {
  let runtime: Runtime;
  let worker: Worker;
  let connection: RedisClient;
  before(async () => {
    connection = createRedis('blocking');
    runtime = createRuntime({ db, redis: redisForTests(), now: () => clock.at });
    const processors = callsProcessors(runtime) as Record<string, (job: Job) => Promise<unknown>>;
    worker = new Worker('calls', (job) => processors[job.name](job), { connection, prefix: queuePrefix('calls'), concurrency: 8 });
    await worker.waitUntilReady();
  });
  after(async () => {
    await worker.close();
    await runtime.close();
    connection.disconnect();
  });
  return { runtime: () => runtime };
}

/** A real `calls` worker process running for the enclosing `describe` block. */
export function withCallsWorker(): void {
  let worker: ChildProcess;
  before(async () => {
    worker = await startCallsWorker();
  });
  after(async () => {
    await stopProcess(worker);
  });
}
