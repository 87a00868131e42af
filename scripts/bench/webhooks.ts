// npm run bench:webhooks — end-to-end webhook delivery, events committed → signed POSTs accepted
// by a local receiver (node:http, keep-alive, 200 at once, records the receipt time of each
// webhook-id). The compiled relay fans call events out of the outbox; one compiled `webhooks`
// worker POSTs them (WEBHOOKS_WORKER_CONCURRENCY, default 100). In one run:
//   1. warm-up: BENCH_WARMUP (2,000) deliveries, not measured (JIT, connections);
//   2. throughput: BENCH_DELIVERIES (20,000) events committed in INSERTs of BENCH_BATCH (500) as
//      fast as Postgres takes them → deliveries/s from the first commit to the last receipt;
//   3. bare loop: got POSTs of the same requests (bodies and headers) to the same receiver at the
//      same concurrency with a keep-alive agent, from a separate process as the worker is →
//      requests/s, and the ratio of 2 to it (target ≥ 0.5);
//   4. latency: BENCH_DELIVERIES events again, paced (an INSERT every 20 ms) at the target load,
//      half the bare loop's rate, or half the throughput of 2 when that is less (or BENCH_RATE)
//      → p50/p99 of receipt − commit per event (target p99 < 250 ms).
// With BENCH_CPU_PROFILE=<dir>, the relay and the worker write V8 CPU profiles there.
// Its own database (ringlane_bench_webhooks, dropped and re-created at each run) and its own
// Redis prefix ({ringlane_bench_webhooks}, cleared at start).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import got from 'got';
import { Redis } from 'ioredis';
import pg from 'pg';
import { benchDatabase, runBench, startProcess, stopServer } from './harness.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const RATE = Number(process.env.BENCH_RATE ?? 0);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2_000);
const CONCURRENCY = Number(process.env.WEBHOOKS_WORKER_CONCURRENCY ?? 100);
// One endpoint receives everything here: its per-endpoint cap (a fairness guard between
// endpoints, default 10) is raised to the worker's concurrency unless set explicitly.
const ENDPOINT_CONCURRENCY = Number(process.env.BENCH_ENDPOINT_CONCURRENCY ?? CONCURRENCY);
const DATABASE = 'ringlane_bench_webhooks';
const REDIS_PREFIX = '{ringlane_bench_webhooks}';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const BODIES_FILE = `/tmp/ringlane-bench-webhooks-${process.pid}.json`;
const SECRET = 'whsec_' + Buffer.from('bench: a thirty-two byte secret!').toString('base64');
const EVENTS = ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'];

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  body: string;
  headers: Record<string, string>;
}

/** The bare loop (run in a child process): `samples` POSTed with got at `concurrency`; reports rate and latencies. */
async function bareLoop(file: string, url: string, concurrency: number): Promise<void> {
  const samples: Sample[] = JSON.parse(await readFile(file, 'utf8'));
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const post = (s: Sample) =>
    got.post(url, {
      body: s.body,
      headers: s.headers,
      agent: { http: agent },
      timeout: { request: 10_000 },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
    });
  // Warm-up (not measured), as the worker had: JIT and the connections.
  const warmup = samples.slice(0, Math.min(samples.length, 2000));
  for (let i = 0; i < warmup.length; i += concurrency) await Promise.all(warmup.slice(i, i + concurrency).map(post));
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < samples.length) {
        const s = samples[next++];
        const t = performance.now();
        const res = await post(s);
        latencies.push(performance.now() - t);
        if (res.statusCode !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  process.send!({ rps: samples.length / seconds, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures });
  agent.destroy();
}


async function clearRedisPrefix(redis: Redis): Promise<void> {
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = nextCursor;
  } while (cursor !== '0');
}

/** The local receiver: 200 at once; per phase, the first receipt time of each webhook-id and one sample request per delivery. */
async function startReceiver() {
  let receipts = new Map<string, number>();
  let samples: Sample[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      requests++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !receipts.has(id)) {
        receipts.set(id, at);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value;
        }
        samples.push({ body: Buffer.concat(chunks).toString('utf8'), headers });
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    receipts: () => receipts,
    samples: () => samples,
    requests: () => requests,
    /** Starts a new phase: forgets what was received. */
    reset: () => {
      receipts = new Map();
      samples = [];
      requests = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

interface PhaseResult {
  events: number;
  batchEvents: number;
  commitSeconds: number;
  /** Deliveries per second from the first commit to the last receipt. */
  rate: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  duplicates: number;
  succeeded: number;
}

/**
 * One measured phase: `events` call events committed in INSERTs of `batchEvents` (each call with
 * its four events), paced at `rate` events/s when given, else as fast as they commit; waits for
 * every delivery to reach the receiver and measures receipt − commit per event.
 */
async function phase(client: pg.Client, receiver: Receiver, orgId: string, tag: string, events: number, batchEvents: number, rate?: number): Promise<PhaseResult> {
  receiver.reset();
  const callsPerBatch = Math.max(1, Math.round(batchEvents / EVENTS.length));
  const batches = Math.ceil(events / (callsPerBatch * EVENTS.length));
  const total = batches * callsPerBatch * EVENTS.length;
  const commitAt: number[] = [];
  const started = performance.now();
  for (let b = 0; b < batches; b++) {
    if (rate) {
      const wait = started + (b * callsPerBatch * EVENTS.length * 1000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
    }
    // Event ids: cev_<tag><batch>_<call>_<sequence>, so a delivery's event names its batch.
    await client.query(
      `WITH c AS (
         INSERT INTO calls (id, org_id, payer_org_id, agent_id, direction, status, outcome, end_reason, phone_number, simulate, last_sequence,
                            dialed_at, started_at, ended_at, duration_seconds, charge_micros)
         SELECT 'call_' || $2 || '_' || i, $1, $1, 'agt_bench', 'outbound', 'completed', 'neutral', 'completed', '+14155550100', '{}'::jsonb, 4,
                now(), now(), now(), 60, 120000
           FROM generate_series(1, $3::int) AS i
         RETURNING *)
       INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at)
       SELECT 'cev_' || $2 || '_' || split_part(c.id, '_', 3) || '_' || e.seq, c.id, c.org_id, e.seq, e.name,
              call_event_payload(ROW(c.*)::calls, e.name, now()) || jsonb_build_object('sequence', e.seq), now()
         FROM c CROSS JOIN unnest($4::text[]) WITH ORDINALITY AS e(name, seq)`,
      [orgId, `${tag}${b}`, callsPerBatch, EVENTS],
    );
    commitAt[b] = performance.now();
  }
  const commitSeconds = (performance.now() - started) / 1000;

  const deadline = Date.now() + 600_000;
  let shown = Date.now();
  while (receiver.receipts().size < total) {
    if (Date.now() > deadline) throw new Error(`phase ${tag}: only ${receiver.receipts().size} of ${total} deliveries received in 10 minutes`);
    if (Date.now() - shown > 5000) {
      shown = Date.now();
      process.stderr.write(`  phase ${tag}: ${receiver.receipts().size}/${total} received\n`);
    }
    await sleep(10);
  }
  const receipts = receiver.receipts();
  const { rows } = await client.query<{ id: string; event_id: string; status: string }>(
    `SELECT d.id, d.event_id, d.status FROM webhook_deliveries d WHERE d.event_id LIKE $1`,
    [`cev\\_${tag}%`],
  );
  const latencies: number[] = [];
  let lastReceipt = 0;
  for (const d of rows) {
    const receivedAt = receipts.get(d.id);
    if (receivedAt === undefined) continue;
    const batch = Number(d.event_id.split('_')[1].slice(tag.length));
    latencies.push(receivedAt - commitAt[batch]);
    lastReceipt = Math.max(lastReceipt, receivedAt);
  }
  if (latencies.length !== total) throw new Error(`phase ${tag}: ${latencies.length} deliveries matched, expected ${total}`);
  latencies.sort((a, b) => a - b);
  const seconds = (lastReceipt - commitAt[0]) / 1000;
  return {
    events: total,
    batchEvents: callsPerBatch * EVENTS.length,
    commitSeconds,
    rate: total / seconds,
    seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
    duplicates: receiver.requests() - total,
    // Recorded after the receipt; a moment later every one is.
    succeeded: rows.filter((d) => d.status === 'succeeded').length,
  };
}

interface BareResult {
  rps: number;
  seconds: number;
  p50: number;
  p99: number;
  failures: number;
  bodyBytes: number;
}

async function runBareLoop(receiver: Receiver): Promise<BareResult> {
  const samples = receiver.samples();
  const bodyBytes = samples.reduce((n, s) => n + Buffer.byteLength(s.body), 0) / samples.length;
  await writeFile(BODIES_FILE, JSON.stringify(samples));
  receiver.reset();
  try {
    const bare = fork(fileURLToPath(import.meta.url), ['bare-loop', BODIES_FILE, receiver.url, String(CONCURRENCY)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return await new Promise<BareResult>((resolve, reject) => {
      bare.once('message', (m) => resolve({ ...(m as Omit<BareResult, 'bodyBytes'>), bodyBytes }));
      bare.once('exit', (code) => reject(new Error(`the bare loop exited with ${code} before reporting`)));
    });
  } finally {
    await rm(BODIES_FILE, { force: true });
  }
}

/**
 * The offered load of the latency phase: BENCH_RATE, else the target load (half the bare loop's
 * rate: a ratio of 0.5), unless the pipeline delivers less than twice that: a queue near or
 * past saturation measures its own growth, not the pipeline, so then half the measured throughput.
 */
function latencyRate(throughput: PhaseResult, bare: BareResult): number {
  if (RATE > 0) return RATE;
  return Math.min(Math.round(bare.rps / 2), Math.round(throughput.rate / 2));
}

async function main(): Promise<void> {
  const databaseUrl = await benchDatabase(DATABASE, { fresh: true });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  await clearRedisPrefix(redis);
  const receiver = await startReceiver();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();

  const orgId = 'org_benchwebhooks';
  await client.query(`INSERT INTO organizations (id, name) VALUES ($1, 'Bench webhooks')`, [orgId]);
  await client.query(`INSERT INTO webhook_endpoints (id, org_id, name, url, secret) VALUES ('whe_benchwebhooks', $1, 'Bench', $2, $3)`, [orgId, receiver.url, SECRET]);

  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOKS_WORKER_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
  };
  // Ready: the relay's LISTEN is in place; the worker's BullMQ worker is registered in Redis.
  const relay = await startProcess('dist/workers/relay.js', env, async () => {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN call_events'`);
    return rows[0].n > 0;
  });
  const queue = new Queue('webhooks', { connection: redis, prefix: REDIS_PREFIX });
  const worker = await startProcess('dist/workers/webhooks.js', env, async () => (await queue.getWorkersCount()) > 0);

  let throughput: PhaseResult;
  let bare: BareResult;
  let paced: PhaseResult;
  let rate: number;
  try {
    // Warm-up (not measured): JIT, the worker's database and HTTP connections.
    if (WARMUP > 0) await phase(client, receiver, orgId, 'w', WARMUP, 100, 1000);
    process.stderr.write(`throughput: ${DELIVERIES} events, INSERTs of ${BATCH}, as fast as they commit\n`);
    throughput = await phase(client, receiver, orgId, 't', DELIVERIES, BATCH);
    process.stderr.write(`bare loop: ${throughput.events} got POSTs of the same requests, concurrency ${CONCURRENCY}\n`);
    bare = await runBareLoop(receiver);
    rate = latencyRate(throughput, bare);
    process.stderr.write(`latency: ${DELIVERIES} events paced at ${rate}/s\n`);
    paced = await phase(client, receiver, orgId, 'p', DELIVERIES, Math.max(4, Math.round(rate / 50)), rate);
  } finally {
    await stopServer(worker);
    await stopServer(relay);
    await queue.close();
    redis.disconnect();
    await client.end();
    await receiver.close();
  }

  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const targetLoad = Math.round(bare.rps / 2);
  console.log(
    `bench:webhooks — one endpoint, relay + 1 webhooks worker (concurrency ${CONCURRENCY}, per endpoint ${ENDPOINT_CONCURRENCY}), body ~${bare.bodyBytes.toFixed(0)} B, ${WARMUP} warm-up deliveries first`,
  );
  console.log(`throughput: ${throughput.events} events committed in INSERTs of ${throughput.batchEvents} as fast as they commit (${throughput.commitSeconds.toFixed(2)} s)`);
  console.log(`  delivered:        ${throughput.rate.toFixed(0)} deliveries/s  (first commit to last receipt ${throughput.seconds.toFixed(2)} s; ${throughput.duplicates} duplicate POSTs)`);
  console.log(`  commit → receipt: p50 ${ms(throughput.p50)}, p99 ${ms(throughput.p99)}  (a backlog drained: the wait in the queue, not the pipeline's latency)`);
  console.log(`bare got loop:      ${bare.rps.toFixed(0)} requests/s  (${throughput.events} POSTs of the same requests, concurrency ${CONCURRENCY}, keep-alive; p50 ${ms(bare.p50)}, p99 ${ms(bare.p99)}; ${bare.failures} failures)`);
  console.log(`ratio:              ${(throughput.rate / bare.rps).toFixed(2)}   target ≥ 0.5`);
  const why = RATE > 0 ? 'BENCH_RATE' : rate === targetLoad ? 'the target load: half the bare loop' : `half the throughput above; the target load, half the bare loop, is ${targetLoad}/s`;
  console.log(`latency at ${rate} events/s (${why}): ${paced.events} events in INSERTs of ${paced.batchEvents}`);
  console.log(`  delivered:        ${paced.rate.toFixed(0)} deliveries/s  (${paced.seconds.toFixed(2)} s; ${paced.duplicates} duplicate POSTs)`);
  console.log(`  commit → receipt: p50 ${ms(paced.p50)}, p99 ${ms(paced.p99)}, max ${ms(paced.max)}   target p99 < 250 ms`);
}

// The bare loop runs in a process of its own, like the worker it is compared with.
runBench(process.argv[2] === 'bare-loop' ? () => bareLoop(process.argv[3], process.argv[4], Number(process.argv[5])) : main);
