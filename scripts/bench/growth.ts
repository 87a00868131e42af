// npm run bench:growth — the API's hot reads and writes and the webhooks worker's claim on an empty database,
// then on the same reseller grown to 10,000 tenants and 1,000,000 calls over 90 days (their events, webhook
// deliveries and attempts, ledger entries and usage buckets): p50/p99 of each, before and after ANALYZE, and
// the ratio grown / empty (goal ≤ 2). See docs/operations.md#benchmarks.
import { Redis } from 'ioredis';
import pg from 'pg';
import { DAYS_AHEAD, HISTORY_TABLES } from '../../src/history/history-partitions.js';
import { retainedRange } from '../../src/history/history-range.js';
import { HistoryRepository } from '../../src/history/history.repository.js';
import { createDataSource, createPool } from '../../src/lib/db.js';
import { parseMoney } from '../../src/lib/money.js';
import { encodeCursor } from '../../src/lib/pagination.js';
import { scanKeys } from '../../src/lib/redis.js';
import { ROLLUP_LAG_MS, UsageRollup } from '../../src/usage/usage-rollup.js';
import { floorHour } from '../../src/usage/usage-window.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { DeliveryClaimsRepository } from '../../src/webhooks/delivery-claims.repository.js';
import { apiClient, benchDatabase, percentile, runBench, startServer, stopServer, type CreatedOrg } from './harness.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 10_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 1_000_000);
/** The calls of the measured tenant, among CALLS; the others' are spread over the other tenants, a few with many. */
const MEASURED_CALLS = Number(process.env.BENCH_MEASURED_CALLS ?? 100_000);
/** History kept (WEBHOOK_RETENTION_DAYS and EVENT_RETENTION_DAYS of the API): the calls are spread over it. */
const HISTORY_DAYS = Number(process.env.BENCH_HISTORY_DAYS ?? 90);
/** Every n-th seeded tenant has a webhook endpoint, which gets a delivery of each of its events (the measured tenant has one). */
const ENDPOINT_EVERY = Number(process.env.BENCH_ENDPOINT_EVERY ?? 4);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const PRE_ANALYZE_REQUESTS = Number(process.env.BENCH_PRE_ANALYZE_REQUESTS ?? 50);
const WARMUP = 20;
/** Tenants made through the API on the empty database, the measured one first. */
const API_TENANTS = 3;
/** The empty database's calls, all the measured tenant's, over its last few days. */
const EMPTY_CALLS = 20;
const EMPTY_DAYS = 3;
/** Deliveries of the measured tenant's endpoint left retrying and due, half of them from two days back: what the claim finds. */
const DUE_DELIVERIES = 20;
const SEED_CONNECTIONS = 2;
const SEED_CHUNK_DAYS = 3;
const RATE_PER_MINUTE = '0.12';
const DATABASE = 'ringlane_bench_growth';
const REDIS_PREFIX = 'ringlane_bench_growth';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OPERATOR_TOKEN = 'bench-operator-token-0123456789';
const PORT = 3906;
const BASE = `http://127.0.0.1:${PORT}`;
const DAY_MS = 86_400_000;
/** Reads one row by key, whatever the size: how busy the machine was in each phase. */
const CONTROL = 'GET /v1/organization (control)';

/** An id as `newId` makes one (prefix, `_`, 22 characters of [0-9A-Za-z]), derived from the SQL text `seed`: distinct seeds, distinct ids. */
const idSql = (prefix: string, seed: string) =>
  `'${prefix}_' || translate(left(encode(sha256(convert_to('${prefix}' || ${seed}, 'UTF8')), 'base64'), 22), '+/', 'Az')`;

/** The ids of seeded tenant `n` (SQL) and of its agent, contact and endpoint. */
const seeded = (n: string) => ({
  org: idSql('ten', `'g' || ${n}`),
  agent: idSql('agt', `'g' || ${n}`),
  location: idSql('loc', `'g' || ${n}`),
  contact: idSql('con', `'g' || ${n}`),
  endpoint: idSql('whe', `'g' || ${n}`),
  phone: `'+1415' || lpad(${n}::text, 7, '0')`,
});

/** The measured tenant, made through the API: the one whose calls, events and deliveries are read. */
interface Measured {
  id: string;
  externalRef: string;
  agentId: string;
  contactId: string;
  phone: string;
  endpointId: string;
}

/**
 * `count` tenants of the reseller, as `POST /v1/tenants` makes them (the reseller's currency and limits, a main
 * location, an agent), created over the last 400 days, each with a contact and every ENDPOINT_EVERY-th with an
 * endpoint; `crm-000001`... as external references.
 */
async function seedTenants(client: pg.Client, resellerId: string, count: number): Promise<void> {
  const t = seeded('n');
  const series = `generate_series(1, $1::int) AS n, LATERAL (SELECT now() - interval '400 days' + n * interval '399 days' / $1 AS at) AS made`;
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO organizations (id, name, timezone, industry, external_ref, parent_id, currency, max_concurrent_calls, max_calls_per_hour, booking_page_enabled, created_at)
     SELECT ${t.org}, 'Tenant ' || n, 'America/New_York', 'dental', 'crm-' || lpad(n::text, 6, '0'), r.id, r.currency, r.max_concurrent_calls, r.max_calls_per_hour,
            false, made.at
       FROM ${series}, organizations r WHERE r.id = $2`,
    [count, resellerId],
  );
  await client.query(
    `INSERT INTO locations (id, org_id, name, address, is_main, created_at, updated_at) SELECT ${t.location}, ${t.org}, 'Main location', '', true, made.at, made.at
       FROM ${series}`,
    [count],
  );
  await client.query(
    `INSERT INTO agents (id, org_id, name, kind, greeting, prompt, created_at, updated_at)
     SELECT ${t.agent}, ${t.org}, 'Tenant ' || n || ' receptionist', 'appointment', 'Hello, you have reached Tenant ' || n || '.', 'Help callers book.', made.at, made.at
       FROM ${series}`,
    [count],
  );
  await client.query(
    `INSERT INTO contacts (id, org_id, name, phone_number, created_at, updated_at) SELECT ${t.contact}, ${t.org}, 'Contact ' || n, ${t.phone}, made.at, made.at
       FROM ${series}`,
    [count],
  );
  await client.query(
    `INSERT INTO webhook_endpoints (id, org_id, name, url, secret, created_at, updated_at)
     SELECT ${t.endpoint}, ${t.org}, 'CRM', 'https://hooks.example.com/ringlane/' || n, 'whsec-bench-' || n, made.at, made.at
       FROM ${series} WHERE n % $2 = 0`,
    [count, ENDPOINT_EVERY],
  );
  await client.query('COMMIT');
}

interface CallPlan {
  tag: string;
  resellerId: string;
  measured: Measured;
  calls: number;
  /** One call in this many is the measured tenant's; the others go to seeded tenants 1..`tenants` (none: all are the measured one's). */
  measuredEvery: number;
  tenants: number;
  from: Date;
  to: Date;
}

/**
 * The calls i in [$1, $2], created in [$3, $4), in creation order, as the engine leaves them when they end:
 * 85% completed (20-600 s), the others no_answer, busy or failed; charged at the reseller's rate and billed at
 * the same (no resale price). $5 measuredEvery, $6 tenants, $7 the tag, $8.. the measured tenant.
 */
function chunkSql(): string {
  const t = seeded('s.n');
  const measured = (column: string, param: string) => `CASE WHEN s.n = 0 THEN ${param}::varchar ELSE ${column} END`;
  return `CREATE TEMP TABLE chunk ON COMMIT DROP AS
    WITH p AS (
      SELECT i, $3::timestamptz + random() * ($4::timestamptz - $3::timestamptz) AS t,
             CASE WHEN $6::int = 0 OR i % $5::int = 0 THEN 0 ELSE 1 + floor(power(random(), 2) * $6::int)::int END AS n,
             random() AS r, random() AS d, floor(random() * 4)::int AS o
        FROM generate_series($1::int, $2::int) AS i
    ), s AS (
      SELECT p.*, CASE WHEN r < 0.85 THEN 'completed' WHEN r < 0.93 THEN 'no_answer' WHEN r < 0.97 THEN 'busy' ELSE 'failed' END AS status,
             CASE WHEN r < 0.85 THEN 20 + floor(d * 580)::int ELSE 0 END AS duration,
             (ARRAY['positive', 'neutral', 'negative', 'voicemail'])[1 + o] AS script_outcome
        FROM p
    )
    SELECT ${idSql('call', `$7::text || s.i`)} AS id,
           ${measured(t.org, '$8')} AS org_id, ${measured(t.agent, '$9')} AS agent_id, ${measured(t.contact, '$10')} AS contact_id,
           ${measured(t.phone, '$11')} AS phone_number,
           CASE WHEN s.n = 0 THEN $12::varchar WHEN s.n % ${ENDPOINT_EVERY} = 0 THEN ${t.endpoint} END AS endpoint_id,
           s.status, CASE WHEN s.status = 'completed' THEN s.script_outcome ELSE 'unreachable' END AS outcome, s.duration AS duration_seconds,
           jsonb_build_object('answer', CASE s.status WHEN 'completed' THEN to_jsonb(true) WHEN 'busy' THEN to_jsonb('busy'::text) ELSE to_jsonb(false) END,
                              'duration_seconds', s.duration, 'outcome', s.script_outcome) AS simulate,
           CASE WHEN s.status = 'completed' THEN 4 ELSE 3 END AS last_sequence,
           date_trunc('milliseconds', s.t) AS created_at,
           date_trunc('milliseconds', s.t) + interval '1 second' AS dialed_at,
           CASE WHEN s.status = 'completed' THEN date_trunc('milliseconds', s.t) + interval '6 seconds' END AS started_at,
           date_trunc('milliseconds', s.t) + CASE s.status WHEN 'completed' THEN interval '6 seconds' + s.duration * interval '1 second'
                                                          WHEN 'no_answer' THEN interval '31 seconds' ELSE interval '3 seconds' END AS ended_at,
           (s.duration * ${parseMoney(RATE_PER_MINUTE)}::bigint + 59) / 60 AS charge_micros
      FROM s
     ORDER BY s.t`;
}

const INSERT_CALLS = `INSERT INTO calls (id, org_id, payer_org_id, agent_id, contact_id, campaign_id, direction, status, outcome, end_reason, phone_number, our_number,
                                         simulate, last_sequence, created_at, updated_at, dialed_at, started_at, ended_at, duration_seconds, charge_micros, billable_micros)
  SELECT id, org_id, $1, agent_id, contact_id, NULL, 'outbound', status, outcome, status, phone_number, NULL,
         simulate, last_sequence, created_at, ended_at, dialed_at, started_at, ended_at, duration_seconds, charge_micros, charge_micros
    FROM chunk`;

/**
 * Each call's events (queued, ringing, in_progress when answered, completed), relayed; a delivery of each to
 * its tenant's endpoint, if any (1% failed after 6 attempts, the others succeeded at the first); their attempts.
 * Each event's body is what call_event_payload() writes from the call's row at that step.
 */
const INSERT_HISTORY = `WITH ev AS (
    INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, created_at, relayed_at)
    SELECT ${idSql('evt', `c.id || ':' || s.seq`)}, c.id, c.org_id, $1, s.seq, s.event,
           jsonb_build_object('event', s.event, 'call_id', c.id, 'org_id', c.org_id, 'status', s.status, 'sequence', s.seq,
                              'occurred_at', iso_utc(s.at), 'phone_number', c.phone_number, 'direction', 'outbound',
                              'outcome', CASE WHEN s.last THEN c.outcome END, 'end_reason', CASE WHEN s.last THEN c.status END,
                              'duration_seconds', CASE WHEN s.last THEN c.duration_seconds END,
                              'started_at', iso_utc(CASE WHEN s.at >= c.started_at THEN c.started_at END),
                              'ended_at', iso_utc(CASE WHEN s.last THEN c.ended_at END),
                              'agent_id', c.agent_id, 'contact_id', c.contact_id, 'campaign_id', NULL),
           s.at, s.at, s.at + interval '20 milliseconds'
      FROM chunk c CROSS JOIN LATERAL (VALUES (1, 'call.queued', 'queued', c.created_at, false), (2, 'call.ringing', 'ringing', c.dialed_at, false),
                                              (3, 'call.in_progress', 'in_progress', c.started_at, false),
                                              (c.last_sequence, 'call.completed', c.status, c.ended_at, true)) AS s(seq, event, status, at, last)
     WHERE s.at IS NOT NULL
    RETURNING id, call_id, org_id, sequence, event, created_at
  ), dl AS (
    INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, last_response_status, created_at, updated_at)
    SELECT ${idSql('dlv', 'ev.id')}, ev.org_id, c.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence,
           CASE WHEN ev.failed THEN 'failed' ELSE 'succeeded' END, CASE WHEN ev.failed THEN 6 ELSE 1 END, NULL,
           CASE WHEN ev.failed THEN 500 ELSE 200 END, ev.created_at, ev.created_at + CASE WHEN ev.failed THEN interval '3 hours' ELSE interval '1 second' END
      FROM (SELECT *, random() < 0.01 AS failed FROM ev) AS ev JOIN chunk c ON c.id = ev.call_id
     WHERE c.endpoint_id IS NOT NULL
    RETURNING id, created_at, status, attempt_count
  )
  INSERT INTO webhook_attempts (id, delivery_id, delivery_created_at, attempted_at, response_status, duration_ms, error, response_body)
  SELECT gen_random_uuid(), dl.id, dl.created_at, dl.created_at + (power(4, a) - 3) * interval '1 second',
         CASE WHEN dl.status = 'succeeded' THEN 200 ELSE 500 END, 40 + a * 7, CASE WHEN dl.status = 'failed' THEN 'HTTP 500' END,
         CASE WHEN dl.status = 'failed' THEN 'upstream unavailable' END
    FROM dl CROSS JOIN generate_series(1, dl.attempt_count) AS a`;

/** Each charged call's ledger entry, as `callCharge` writes it (the balance is set once at the end). */
const INSERT_CHARGES = `INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, reference, description, created_at)
  SELECT ${idSql('led', 'id')}, $1, org_id, 'call', -charge_micros, 'call:' || id, 'call ' || id || ', ' || duration_seconds || ' s', ended_at
    FROM chunk WHERE charge_micros > 0`;

/** Seeds `plan`'s calls in chunks of SEED_CHUNK_DAYS, oldest first, on SEED_CONNECTIONS connections at once. */
async function seedCalls(url: string, plan: CallPlan, progress: (done: number) => void): Promise<void> {
  const span = plan.to.getTime() - plan.from.getTime();
  const chunks = Math.max(1, Math.ceil(span / (SEED_CHUNK_DAYS * DAY_MS)));
  let next = 0;
  let done = 0;
  const m = plan.measured;
  const lane = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (let k = next++; k < chunks; k = next++) {
        const lo = Math.floor((k * plan.calls) / chunks) + 1;
        const hi = Math.floor(((k + 1) * plan.calls) / chunks);
        const from = new Date(plan.from.getTime() + (k * span) / chunks);
        const to = new Date(plan.from.getTime() + ((k + 1) * span) / chunks);
        await client.query('BEGIN');
        await client.query(chunkSql(), [lo, hi, from, to, plan.measuredEvery, plan.tenants, plan.tag, m.id, m.agentId, m.contactId, m.phone, m.endpointId]);
        await client.query(INSERT_CALLS, [plan.resellerId]);
        await client.query(INSERT_HISTORY, [plan.resellerId]);
        // Triggers off for the charges alone: no foreign key check per entry, and no balance trigger
        // (the balance is set from the ledger at the end).
        await client.query('SET LOCAL session_replication_role = replica');
        await client.query(INSERT_CHARGES, [plan.resellerId]);
        await client.query('COMMIT');
        done += hi - lo + 1;
        progress(done);
      }
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: SEED_CONNECTIONS }, lane));
}

/** The reseller's balance made the sum of its ledger again (the invariant the balance trigger keeps). */
async function settleBalance(client: pg.Client, resellerId: string): Promise<void> {
  await client.query(`UPDATE organizations SET balance_micros = (SELECT COALESCE(sum(amount_micros), 0) FROM ledger_entries WHERE org_id = $1) WHERE id = $1`, [
    resellerId,
  ]);
}

/**
 * Every hourly bucket before `until` recomputed from the calls and the ledger in one set-based statement, and
 * the watermark moved to `until`: what the usage rollup leaves (CALLS_COUNTED, charges by kind, adjustments
 * left out; no texts were seeded). The rollup itself runs after ANALYZE and must change nothing.
 */
async function seedBuckets(client: pg.Client, until: Date): Promise<void> {
  await client.query(
    `INSERT INTO usage_buckets AS b (org_id, hour, completed_calls, talk_time_seconds, call_charges_micros, other_charges_micros, billable_calls_micros, billable_other_micros)
     SELECT org_id, hour, sum(completed_calls)::int, sum(talk_time_seconds)::bigint, sum(call_charges)::bigint, sum(other_charges)::bigint, sum(billable_calls)::bigint, 0
       FROM (SELECT org_id, date_trunc('hour', ended_at, 'UTC') AS hour, count(*) FILTER (WHERE status = 'completed') AS completed_calls,
                    COALESCE(sum(duration_seconds) FILTER (WHERE status = 'completed'), 0) AS talk_time_seconds, 0 AS call_charges, 0 AS other_charges,
                    COALESCE(sum(billable_micros), 0) AS billable_calls
               FROM calls WHERE ended_at < $1 AND (status = 'completed' OR billable_micros > 0) GROUP BY 1, 2
             UNION ALL
             SELECT subject_org_id, date_trunc('hour', created_at, 'UTC'), 0, 0, -COALESCE(sum(amount_micros) FILTER (WHERE kind = 'call'), 0),
                    -COALESCE(sum(amount_micros) FILTER (WHERE kind <> 'call'), 0), 0
               FROM ledger_entries WHERE created_at < $1 AND kind <> 'adjustment' GROUP BY 1, 2) AS parts
      GROUP BY org_id, hour
     ON CONFLICT (org_id, hour) DO UPDATE SET completed_calls = EXCLUDED.completed_calls, talk_time_seconds = EXCLUDED.talk_time_seconds,
        call_charges_micros = EXCLUDED.call_charges_micros, other_charges_micros = EXCLUDED.other_charges_micros,
        billable_calls_micros = EXCLUDED.billable_calls_micros, billable_other_micros = EXCLUDED.billable_other_micros`,
    [until],
  );
  await client.query(`UPDATE usage_watermark SET rolled_until = $1 WHERE id = 1`, [until]);
}

/** A digest of the usage buckets before `before`: equal before and after a rollup that found nothing to change there. */
async function bucketsDigest(client: pg.Client, before: Date): Promise<string> {
  const { rows } = await client.query<{ digest: string }>(
    `SELECT md5(string_agg(concat_ws(',', org_id, hour, completed_calls, talk_time_seconds, call_charges_micros, other_charges_micros, billable_calls_micros,
                                     billable_other_micros), ';' ORDER BY org_id, hour)) AS digest FROM usage_buckets WHERE hour < $1`,
    [before],
  );
  return rows[0].digest;
}

/** The claim's work: the endpoint's DUE_DELIVERIES newest deliveries, half of them from two days back, retrying and due now. */
async function makeDue(client: pg.Client, endpointId: string): Promise<number> {
  const half = DUE_DELIVERIES / 2;
  const { rowCount } = await client.query(
    `WITH due AS (
       (SELECT id, created_at FROM webhook_deliveries WHERE endpoint_id = $1 AND created_at >= now() - interval '2 days' ORDER BY created_at DESC LIMIT $2)
       UNION ALL
       (SELECT id, created_at FROM webhook_deliveries WHERE endpoint_id = $1 AND created_at < now() - interval '2 days' ORDER BY created_at DESC LIMIT $2))
     UPDATE webhook_deliveries d SET status = 'retrying', next_attempt_at = now(), last_response_status = 500, updated_at = now()
       FROM due WHERE d.id = due.id AND d.created_at = due.created_at`,
    [endpointId, half],
  );
  return rowCount ?? 0;
}

interface Operation {
  name: string;
  run: () => Promise<unknown>;
}

interface Figures {
  p50: number;
  p99: number;
}

/** `warmup` rounds, then `requests` rounds of every operation in turn (one at a time); p50/p99 of each in ms. */
async function measure(operations: Operation[], requests: number, warmup: number): Promise<Map<string, Figures>> {
  for (let i = 0; i < warmup; i++) for (const op of operations) await op.run();
  const times = new Map(operations.map((op) => [op.name, [] as number[]]));
  for (let i = 0; i < requests; i++) {
    for (const op of operations) {
      const started = performance.now();
      await op.run();
      times.get(op.name)!.push(performance.now() - started);
    }
  }
  return new Map(
    [...times].map(([name, ms]) => {
      const sorted = ms.sort((a, b) => a - b);
      return [name, { p50: percentile(sorted, 50), p99: percentile(sorted, 99) }];
    }),
  );
}

const count = (n: number) => n.toLocaleString('en');
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

async function main(): Promise<void> {
  const databaseUrl = await benchDatabase(DATABASE, { fresh: true });
  // The calls a previous run placed wait under this prefix for a worker that never comes.
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const left = await scanKeys(redis, `${REDIS_PREFIX}:*`);
  if (left.length) await redis.del(...left);
  redis.disconnect();
  const env = {
    DATABASE_URL: databaseUrl,
    PORT: String(PORT),
    OPERATOR_TOKEN,
    LOG_LEVEL: 'warn',
    REDIS_PREFIX,
    REDIS_URL,
    NODE_ENV: 'production',
    WEBHOOK_RETENTION_DAYS: String(HISTORY_DAYS),
    EVENT_RETENTION_DAYS: String(HISTORY_DAYS),
  };
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const dataSource = await createDataSource(databaseUrl).initialize();
  const claimsPool = createPool(2, databaseUrl);
  const claims = new DeliveryClaimsRepository(claimsPool);
  const usageRollup = new UsageRollup(new UsageRepository(dataSource));
  // The partitions of the retained days, as the maintenance worker keeps them with this retention.
  const history = new HistoryRepository(dataSource);
  for (const { table } of HISTORY_TABLES) await history.createDays(table, HISTORY_DAYS, DAYS_AHEAD);

  const api = await startServer('dist/src/server.js', env, `${BASE}/readyz`);
  // Its log goes nowhere: say why a request failed if the process went away before the end.
  let stopping = false;
  api.once('exit', (code, signal) => stopping || process.stderr.write(`bench:growth: the web process exited (${signal ?? code})\n`));
  const http = apiClient(BASE, 1);
  try {
    const call = http.request;
    const { org: reseller, api_key } = await call<CreatedOrg>('POST', '/admin/v1/orgs', OPERATOR_TOKEN, {
      name: 'Bench reseller',
      reseller: true,
      tenant_limit: TENANTS,
      balance: '10000000',
      rates: { per_minute: RATE_PER_MINUTE, per_text: '0.05' },
    });
    const key = api_key.key;
    const tenants: Array<{ id: string; external_ref: string }> = [];
    for (let i = 0; i < API_TENANTS; i++) {
      tenants.push(await call('POST', '/v1/tenants', key, { name: `API tenant ${i}`, timezone: 'UTC', industry: 'dental', external_ref: `crm-api-${i}` }));
    }
    const inTenant = { 'X-Tenant-Id': tenants[0].id };
    const { data: agents } = await call<{ data: Array<{ id: string }> }>('GET', '/v1/agents', key, undefined, inTenant);
    const phone = '+14155550100';
    const contact = await call<{ id: string }>('POST', '/v1/contacts', key, { name: 'Measured contact', phone_number: phone }, inTenant);
    const endpoint = await call<{ id: string }>(
      'POST',
      '/v1/webhook-endpoints',
      key,
      { name: 'CRM', url: 'https://hooks.example.com/ringlane/measured', secret: 'whsec-bench-measured', outcomes: [] },
      inTenant,
    );
    const measured: Measured = {
      id: tenants[0].id,
      externalRef: tenants[0].external_ref,
      agentId: agents[0].id,
      contactId: contact.id,
      phone,
      endpointId: endpoint.id,
    };

    // The empty database: a handful of calls of the measured tenant, with their history, over its last days.
    const now = Date.now();
    // Created up to 15 minutes ago: every call has ended (600 s at most).
    const plan = { resellerId: reseller.id, measured, to: new Date(now - 15 * 60_000) };
    await seedCalls(databaseUrl, { ...plan, tag: 'e', calls: EMPTY_CALLS, measuredEvery: 1, tenants: 0, from: new Date(now - EMPTY_DAYS * DAY_MS) }, () => {});
    await settleBalance(client, reseller.id);
    const due = await makeDue(client, measured.endpointId);
    await usageRollup.run(new Date());
    await client.query('ANALYZE');

    /** The 366 days to the current minute. */
    const year = () => {
      const until = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      return { since: new Date(until.getTime() - 366 * DAY_MS), until };
    };
    /** A page 90% of the way down the measured tenant's calls, as a client following cursors would reach it. */
    const deepCursor = async () => {
      const { rows } = await client.query<{ created_at: Date; id: string }>(
        `SELECT created_at, id FROM calls WHERE org_id = $1 ORDER BY created_at DESC, id DESC OFFSET (SELECT count(*) * 9 / 10 FROM calls WHERE org_id = $1) LIMIT 1`,
        [measured.id],
      );
      return encodeCursor(rows[0]);
    };
    const operations = (cursor: string): Operation[] => {
      const get =
        (path: string, headers: Record<string, string> = inTenant) =>
        () =>
          call('GET', path, key, undefined, headers);
      let range = retainedRange(HISTORY_DAYS);
      const { since, until } = year();
      return [
        { name: CONTROL, run: get('/v1/organization') },
        { name: 'GET /v1/calls', run: get('/v1/calls') },
        { name: 'GET /v1/calls?status=completed', run: get('/v1/calls?status=completed') },
        { name: 'GET /v1/calls?cursor= (90% deep)', run: get(`/v1/calls?cursor=${cursor}`) },
        { name: 'GET /v1/events', run: get('/v1/events') },
        { name: 'GET /v1/webhook-deliveries', run: get('/v1/webhook-deliveries') },
        {
          name: 'GET /v1/tenants/{id}/usage (366 days)',
          run: get(`/v1/tenants/${measured.id}/usage?since=${since.toISOString()}&until=${until.toISOString()}`, {}),
        },
        { name: 'GET /v1/tenants?external_ref=', run: get(`/v1/tenants?external_ref=${measured.externalRef}`, {}) },
        // A page of the report: the 3 tenants of the empty database, 100 of the grown one's (so its ratio is not the others').
        { name: 'GET /v1/tenant-usage (366 days, 100)', run: get(`/v1/tenant-usage?since=${since.toISOString()}&until=${until.toISOString()}&limit=100`, {}) },
        {
          name: 'POST /v1/calls',
          run: () =>
            call('POST', '/v1/calls', key, { agent_id: measured.agentId, contact_id: measured.contactId, simulate: { duration_seconds: 5 } }, inTenant),
        },
        // The webhooks worker's scan and claim (its repository, its pool); a lease of 0 s leaves the deliveries due for the next round.
        {
          name: 'claim: openRange + openEndpoints',
          run: async () => {
            range = await claims.openRange(retainedRange(HISTORY_DAYS));
            await claims.openEndpoints('', 1000, range);
          },
        },
        { name: 'claim: claimDue', run: () => claims.claimDue([{ endpointId: measured.endpointId, quota: DUE_DELIVERIES }], 0, range) },
      ];
    };

    const empty = await measure(operations(await deepCursor()), REQUESTS, WARMUP);

    // Grown: the same reseller, TENANTS tenants in all, CALLS more calls over HISTORY_DAYS days.
    const seedStarted = performance.now();
    let started = performance.now();
    await seedTenants(client, reseller.id, TENANTS - API_TENANTS);
    const tenantSeconds = seconds(started);
    started = performance.now();
    const seedNow = Date.now();
    let reported = 0;
    await seedCalls(
      databaseUrl,
      {
        ...plan,
        tag: 'g',
        calls: CALLS,
        measuredEvery: Math.max(1, Math.round(CALLS / MEASURED_CALLS)),
        tenants: TENANTS - API_TENANTS,
        from: new Date(seedNow - (HISTORY_DAYS - 0.5) * DAY_MS),
        to: new Date(seedNow - 15 * 60_000),
      },
      (done) => {
        if (done - reported >= CALLS / 10) {
          reported = done;
          process.stderr.write(`seeded ${count(done)} calls (${seconds(started)} s)\n`);
        }
      },
    );
    const callSeconds = seconds(started);
    started = performance.now();
    await settleBalance(client, reseller.id);
    const rolledUntil = floorHour(new Date(Date.now() - ROLLUP_LAG_MS));
    await seedBuckets(client, rolledUntil);
    const bucketSeconds = seconds(started);
    const seedSeconds = seconds(seedStarted);
    const { rows: sizes } = await client.query<Record<string, string>>(
      `SELECT (SELECT count(*) FROM organizations WHERE parent_id = $1) AS tenants, (SELECT count(*) FROM calls) AS calls,
              (SELECT count(*) FROM calls WHERE org_id = $2) AS measured, (SELECT count(*) FROM call_events) AS events,
              (SELECT count(*) FROM webhook_deliveries) AS deliveries, (SELECT count(*) FROM webhook_attempts) AS attempts,
              (SELECT count(*) FROM ledger_entries) AS ledger, (SELECT count(*) FROM usage_buckets) AS buckets,
              pg_size_pretty(pg_database_size(current_database())) AS size`,
      [reseller.id, measured.id],
    );
    const { rows: autoanalyzed } = await client.query<{ n: number; of: number; autovacuum: string }>(
      `SELECT count(*) FILTER (WHERE last_autoanalyze IS NOT NULL)::int AS n, count(*)::int AS of, current_setting('autovacuum') AS autovacuum FROM pg_stat_user_tables
        WHERE relname ~ '^(calls|call_events|webhook_deliveries|webhook_attempts|ledger_entries|organizations)'`,
    );
    // The seed's gigabytes written out now, not while the pass before ANALYZE runs.
    started = performance.now();
    await client.query('CHECKPOINT');
    const checkpointSeconds = seconds(started);
    const cursor = await deepCursor();
    const preAnalyze = await measure(operations(cursor), PRE_ANALYZE_REQUESTS, WARMUP);
    started = performance.now();
    await client.query('ANALYZE');
    const analyzeSeconds = seconds(started);
    // The usage rollup from the earliest activity again (as after the ResalePrices migration): it recomputes
    // every bucket, and must find the seeded ones as it would have written them.
    const digest = await bucketsDigest(client, rolledUntil);
    await client.query('DELETE FROM usage_watermark');
    started = performance.now();
    const rollup = await usageRollup.run(new Date());
    const rollupSeconds = seconds(started);
    const rollupAgrees = digest === (await bucketsDigest(client, rolledUntil));
    const grown = await measure(operations(cursor), REQUESTS, WARMUP);
    const { since, until } = year();
    const usage = await call<{ completed_calls: number }>(
      'GET',
      `/v1/tenants/${measured.id}/usage?since=${since.toISOString()}&until=${until.toISOString()}`,
      key,
    );
    const { rows: truth } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM calls WHERE org_id = $1 AND status = 'completed' AND ended_at >= $2 AND ended_at < $3`,
      [measured.id, since, until],
    );

    const s = sizes[0];
    console.log(
      `bench:growth — one reseller, measured as its tenant ${measured.id} (X-Tenant-Id) and as the reseller; web only (NODE_ENV=production, LOG_LEVEL=warn), retention ${HISTORY_DAYS} days`,
    );
    console.log(
      `empty: ${API_TENANTS} tenants made through the API, ${EMPTY_CALLS} calls of the measured tenant over ${EMPTY_DAYS} days with their events, deliveries and attempts (analyzed)`,
    );
    console.log(
      `grown: ${count(Number(s.tenants))} tenants, ${count(Number(s.calls))} calls (${count(Number(s.measured))} the measured tenant's) over ${HISTORY_DAYS} days, ${count(Number(s.events))} events, ` +
        `${count(Number(s.deliveries))} deliveries, ${count(Number(s.attempts))} attempts, ${count(Number(s.ledger))} ledger entries, ${count(Number(s.buckets))} usage buckets; database ${s.size}`,
    );
    console.log(
      `seeded in ${seedSeconds} s: tenants ${tenantSeconds} s, calls and their history ${callSeconds} s (${SEED_CONNECTIONS} connections), balance and usage buckets ${bucketSeconds} s; CHECKPOINT ${checkpointSeconds} s`,
    );
    console.log(`claim: ${due} deliveries retrying and due, of the measured tenant's endpoint`);
    console.log(
      `before ANALYZE: autovacuum (${autoanalyzed[0].autovacuum}) had analyzed ${autoanalyzed[0].n} of ${autoanalyzed[0].of} history, calls, ledger and organizations tables (partitions included; never the partitioned parents)`,
    );
    console.log(`ANALYZE ran after seeding (${analyzeSeconds} s), before the grown figures`);
    console.log(
      `usage rollup from the earliest activity after ANALYZE: ${rollupSeconds} s (${rollup.chunks} chunks), seeded buckets ${rollupAgrees ? 'unchanged' : 'CHANGED'}; ` +
        `366-day completed_calls ${usage.completed_calls}, the calls say ${truth[0].n}: ${usage.completed_calls === truth[0].n ? 'equal' : 'DIFFERENT'}`,
    );
    console.log(
      `${WARMUP} warm-up rounds, then ${REQUESTS} sequential requests each (${PRE_ANALYZE_REQUESTS} before ANALYZE), operations interleaved, one keep-alive connection; ms`,
    );
    const ms = (v: number) => v.toFixed(2).padStart(7);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`.padStart(7);
    const control = (figures: Map<string, Figures>) => figures.get(CONTROL)!.p50;
    // The control's own ratios say how much busier the machine was while the grown and pre-ANALYZE figures were taken.
    const busier = control(grown) / control(empty);
    const busierBefore = control(preAnalyze) / control(grown);
    const head = (label: string, width = 9) => label.padStart(width);
    console.log(
      `${'operation'.padEnd(38)} ${head('empty p50')} ${head('p99', 7)} │ ${head('grown p50')} ${head('p99', 7)} │ ${head('ratio p50')} ${head('p99', 7)} ${head('÷ control')} │ ` +
        `${head('pre-ANALYZE p50', 15)} ${head('÷ grown')} ${head('÷ control')}`,
    );
    for (const [name, e] of empty) {
      const p = preAnalyze.get(name)!;
      const g = grown.get(name)!;
      const flag = g.p50 / e.p50 > 2 ? '  > 2×' : '';
      console.log(
        `${name.padEnd(38)} ${ms(e.p50).padStart(9)} ${ms(e.p99)} │ ${ms(g.p50).padStart(9)} ${ms(g.p99)} │ ${ratio(g.p50, e.p50).padStart(9)} ${ratio(g.p99, e.p99)} ` +
          `${ratio(g.p50 / e.p50, busier).padStart(9)} │ ${ms(p.p50).padStart(15)} ${ratio(p.p50, g.p50).padStart(9)} ${ratio(p.p50 / g.p50, busierBefore).padStart(9)}${flag}`,
      );
    }
  } finally {
    stopping = true;
    await http.close();
    await stopServer(api);
    await claimsPool.end();
    await dataSource.destroy();
    await client.end();
  }
}

runBench(main);
