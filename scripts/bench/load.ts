// npm run bench:load — the whole service as `npm start` runs it, at its defaults, under an open-model
// load: POST /v1/calls sent on a clock (not after the previous answer), answered calls with 1 s of
// talk, one organization, one webhook endpoint on a receiver in a process of its own (or, with
// BENCH_SHAPE=reseller, one reseller-wide endpoint over BENCH_TENANTS tenants, the calls spread
// over them). Prints, per rate, POST and event-arrival percentiles and CPU per delivered event of
// every process (the service's, their Postgres backends, Redis); the highest rate held; a burst;
// the API against bare Express; the idle cost. What each figure means: docs/operations.md#benchmarks.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { Agent, request } from 'undici';
import { scanKeys } from '../../src/lib/redis.js';
import {
  BENCH_APPLICATION_NAME,
  benchDatabase,
  benchPool,
  CpuSampler,
  type CpuSource,
  load,
  loadGenerator,
  median,
  percentile,
  processStat,
  redisServerPid,
  runBench,
  startServer,
  stopServer,
  track,
  type CreatedOrg,
} from './harness.js';

const numberFrom = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const RATES = (process.env.BENCH_RATES ?? '50,100,150,200,250,300,400').split(',').map(Number);
const STEP_SECONDS = numberFrom('BENCH_STEP_SECONDS', 15);
const DRAIN_SECONDS = numberFrom('BENCH_DRAIN_SECONDS', 60);
const BURST_CALLS = numberFrom('BENCH_BURST_CALLS', 2000);
const BURST_IN_FLIGHT = numberFrom('BENCH_BURST_IN_FLIGHT', 32);
const IDLE_SECONDS = numberFrom('BENCH_IDLE_SECONDS', 60);
const IDLE_SETTLE_SECONDS = numberFrom('BENCH_IDLE_SETTLE_SECONDS', 180);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'idle,api,rates,burst').split(','));
/** The soak (phase `soak`, not run by default): this rate for this many minutes, a row per BENCH_SOAK_STEP_SECONDS. */
/** BENCH_KEEP_GOING=1: every rate of BENCH_RATES, held or not (it still stops at one not drained). */
const KEEP_GOING = process.env.BENCH_KEEP_GOING === '1';
/** BENCH_BREAKDOWN=1: each rate's CPU by process, as the burst prints it. */
const BREAKDOWN = process.env.BENCH_BREAKDOWN === '1';
const SOAK_RATE = numberFrom('BENCH_SOAK_RATE', 60);
const SOAK_MINUTES = numberFrom('BENCH_SOAK_MINUTES', 15);
const SOAK_STEP_SECONDS = numberFrom('BENCH_SOAK_STEP_SECONDS', 60);
const PORT = numberFrom('BENCH_PORT', 3910);
const RECEIVER_PORT = numberFrom('BENCH_RECEIVER_PORT', 3911);
const BARE_PORT = numberFrom('BENCH_BARE_PORT', 3912);
const DATABASE = process.env.BENCH_DATABASE ?? 'ringlane_bench_load';
/** `org`: one organization, one endpoint. `reseller`: one reseller-wide endpoint (CONTRACT.md §5) over BENCH_TENANTS tenants, the calls round-robin over them. */
const SHAPE = process.env.BENCH_SHAPE ?? 'org';
const TENANTS = numberFrom('BENCH_TENANTS', 100);
/** BENCH_TRACING=1: the service exports its traces (OTLP/HTTP at its default, protobuf) to a sink in a process of its own, as it would to a collector elsewhere. */
const TRACING = process.env.BENCH_TRACING === '1';
const SINK_PORT = numberFrom('BENCH_SINK_PORT', 3913);
/**
 * BENCH_BARRIER=<path>: runs of bench:load started together (bench:tracing's pairs) each wait
 * there after the warm-up until BENCH_BARRIER_PARTIES of them have arrived, so that their measured
 * phases run at the same moments of the machine.
 */
const BARRIER = process.env.BENCH_BARRIER;
const BARRIER_PARTIES = numberFrom('BENCH_BARRIER_PARTIES', 2);
const REDIS_PREFIX = DATABASE;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OPERATOR_TOKEN = 'bench-operator-token-0123456789';
const SECRET = 'whsec_' + Buffer.from('bench: a thirty-two byte secret!').toString('base64');
const EVENTS_PER_CALL = 4;
/** The goals of issue 19, printed beside the figures. */
const GOAL = { postP99: 250, arrivalP99: 1000, cpuPerEvent: 1.5, postgresPerCall: 2, apiRatio: 0.5, apiP99: 25, idleCore: 1 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Marks this run as arrived at BENCH_BARRIER (a file `<path>.<port>`) and waits for the others, at most ten minutes. */
async function meetAtBarrier(path: string): Promise<void> {
  writeFileSync(`${path}.${PORT}`, '');
  const arrived = () => readdirSync(dirname(path)).filter((f) => f.startsWith(`${basename(path)}.`)).length;
  for (const deadline = Date.now() + 600_000; arrived() < BARRIER_PARTIES; await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`bench: the other runs did not reach the barrier ${path}`);
  }
}
const wallClock = () => performance.timeOrigin + performance.now();
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

// ---------------------------------------------------------------------------------------------
// The receiver (a process of its own): answers 200 at once, keeps each event's arrival − occurred_at.

type ReceiverQuery = { ask: 'arrivals'; callIds: string[] };
interface ReceiverAnswer {
  received: number;
  requests: number;
  arrivals: number[];
}

function receiverMain(port: number): void {
  const arrivals = new Map<string, number[]>();
  const seen = new Set<string>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = wallClock();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      requests++;
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { call_id: string; sequence: number; occurred_at: string };
        const key = `${event.call_id}:${event.sequence}`;
        if (seen.has(key)) return;
        seen.add(key);
        const list = arrivals.get(event.call_id) ?? [];
        list.push(at - Date.parse(event.occurred_at));
        arrivals.set(event.call_id, list);
      } catch {
        // counted as a request only
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1', () => process.send!('ready'));
  process.on('message', (q: ReceiverQuery) => {
    const out: number[] = [];
    for (const id of q.callIds) out.push(...(arrivals.get(id) ?? []));
    process.send!({ received: out.length, requests, arrivals: out } satisfies ReceiverAnswer);
  });
}

// ---------------------------------------------------------------------------------------------
// The trace sink (BENCH_TRACING=1, a process of its own): an OTLP/HTTP receiver that counts the spans and drops them.

interface SinkAnswer {
  requests: number;
  spans: number;
  /** Spans by `service.name` and span name. */
  byName: Record<string, number>;
}

/** The fields of one protobuf message: number and, for a length-delimited one, its bytes. */
function* protobufFields(buf: Buffer): Generator<[number, Buffer | null]> {
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = buf[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < buf.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 2) {
      const length = varint();
      yield [Math.floor(tag / 8), buf.subarray(at, at + length)];
      at += length;
    } else if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new Error(`protobuf wire type ${wire}`);
  }
}

/** The length-delimited fields numbered `field` of a protobuf message. */
const fieldsOf = (buf: Buffer, field: number) => [...protobufFields(buf)].filter(([f, b]) => f === field && b).map(([, b]) => b!);

/** (service.name, span name) of each span of an OTLP ExportTraceServiceRequest in protobuf. */
function protobufSpans(body: Buffer): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const resourceSpans of fieldsOf(body, 1)) {
    let service = '?';
    for (const resource of fieldsOf(resourceSpans, 1))
      for (const attribute of fieldsOf(resource, 1)) {
        const [value] = fieldsOf(attribute, 2);
        if (fieldsOf(attribute, 1)[0]?.toString() === 'service.name' && value) service = fieldsOf(value, 1)[0]?.toString() ?? '?';
      }
    for (const scopeSpans of fieldsOf(resourceSpans, 2))
      for (const span of fieldsOf(scopeSpans, 2)) out.push([service, fieldsOf(span, 5)[0]?.toString() ?? '']);
  }
  return out;
}

/** The same of one in JSON. */
function jsonSpans(body: Buffer): Array<[string, string]> {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: Array<{
      resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
      scopeSpans?: Array<{ spans?: Array<{ name: string }> }>;
    }>;
  };
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
    return (rs.scopeSpans ?? []).flatMap((ss) => (ss.spans ?? []).map((span): [string, string] => [service, span.name]));
  });
}

function sinkMain(port: number): void {
  const counted: SinkAnswer = { requests: 0, spans: 0, byName: {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // An empty ExportTraceServiceResponse, in the request's encoding.
      const json = req.headers['content-type'] === 'application/json';
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
      counted.requests++;
      const body = Buffer.concat(chunks);
      for (const [service, name] of json ? jsonSpans(body) : protobufSpans(body)) {
        counted.spans++;
        // Statements by their first word: the table stays short.
        const key = `${service} ${name.replace(/^(pg\.query:\S+).*/, '$1')}`;
        counted.byName[key] = (counted.byName[key] ?? 0) + 1;
      }
    });
  });
  server.listen(port, '127.0.0.1', () => process.send!('ready'));
  process.on('message', () => process.send!(counted));
}

// ---------------------------------------------------------------------------------------------
// The load generator (a process of its own): POST /v1/calls on a clock, or with a fixed number in flight.

/** One place calls go: inside a tenant (X-Tenant-Id) or the organization itself, with its agent and contact. */
interface CallTarget {
  tenantId: string | null;
  body: string;
}

interface LoadOrder {
  base: string;
  key: string;
  /** Each call goes to the next, round-robin. */
  targets: CallTarget[];
  /** Open model: calls per second for `seconds`. */
  rate?: number;
  seconds?: number;
  /** Closed model (the burst): `calls` with `inFlight` at a time. */
  calls?: number;
  inFlight?: number;
}

interface LoadReport {
  sent: number;
  accepted: number;
  statuses: Record<string, number>;
  /** Answer − scheduled send time (open model) or − send time (closed), ms, ascending. */
  latencies: number[];
  callIds: string[];
  firstSent: number;
  lastAnswered: number;
}

async function loadgenMain(): Promise<void> {
  const dispatcher = new Agent({ connections: 1024, pipelining: 1, keepAliveTimeout: 60_000 });
  const run = async (order: LoadOrder) => {
    const report: LoadReport = { sent: 0, accepted: 0, statuses: {}, latencies: [], callIds: [], firstSent: wallClock(), lastAnswered: 0 };
    const headers = order.targets.map(({ tenantId }) => ({
      authorization: `Bearer ${order.key}`,
      'content-type': 'application/json',
      ...(tenantId ? { 'x-tenant-id': tenantId } : {}),
    }));
    const post = async (startedAt: number) => {
      const at = report.sent++ % order.targets.length;
      let status = 'error';
      try {
        const res = await request(`${order.base}/v1/calls`, {
          method: 'POST',
          headers: headers[at],
          body: order.targets[at].body,
          dispatcher,
          headersTimeout: 60_000,
          bodyTimeout: 60_000,
        });
        const text = await res.body.text();
        status = String(res.statusCode);
        if (res.statusCode === 201 || res.statusCode === 200) {
          report.accepted++;
          report.callIds.push((JSON.parse(text) as { id: string }).id);
        }
      } catch {
        // counted under 'error'
      }
      const now = wallClock();
      report.latencies.push(now - startedAt);
      report.lastAnswered = Math.max(report.lastAnswered, now);
      report.statuses[status] = (report.statuses[status] ?? 0) + 1;
    };
    const pending: Array<Promise<void>> = [];
    if (order.rate) {
      const total = Math.round(order.rate * order.seconds!);
      const interval = 1000 / order.rate;
      const t0 = wallClock();
      report.firstSent = t0;
      for (let i = 0; i < total;) {
        const now = wallClock();
        // Every request whose time has come is sent now, timed from its scheduled time.
        while (i < total && t0 + i * interval <= now) pending.push(post(t0 + i++ * interval));
        if (i < total) await sleep(Math.max(0, t0 + i * interval - wallClock()));
      }
    } else {
      let next = 0;
      await Promise.all(
        Array.from({ length: order.inFlight! }, async () => {
          while (next++ < order.calls!) await post(wallClock());
        }),
      );
    }
    await Promise.all(pending);
    report.latencies.sort((a, b) => a - b);
    process.send!(report);
  };
  process.on('message', (order: LoadOrder) => void run(order));
  process.send!('ready');
}

// ---------------------------------------------------------------------------------------------
// The system under test: `npm start`'s process tree, its Postgres backends, Redis.

function childProcess(entry: string, role: string, args: string[] = []): Promise<ChildProcess> {
  const child = track(fork(entry, [role, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${role} exited (${code}) before it was ready`)));
  });
}

function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(message as object);
  });
}

/** Every process under `root`, named by its entry (`server` is web; start and supervisor are `npm start`'s own). */
function descendants(root: number): Map<number, string> {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = processStat(Number(name));
    if (stat) parents.set(Number(name), stat.ppid);
  }
  const found = new Map<number, string>();
  const walk = (pid: number) => {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      return;
    }
    const entry = /dist\/(?:src|workers|scripts)\/([\w-]+)\.js/.exec(cmdline)?.[1] ?? 'other';
    found.set(pid, entry === 'server' ? 'web' : entry === 'start' || entry === 'supervisor' ? 'npm start' : entry);
    for (const [child, parent] of parents) if (parent === pid) walk(child);
  };
  walk(root);
  return found;
}

function systemSources(client: pg.Pool, root: number, redisPid: number | null): () => Promise<CpuSource[]> {
  let postmaster: number | null = null;
  return async () => {
    const tree = descendants(root);
    const sources: CpuSource[] = [...tree].map(([pid, label]) => ({ pid, label }));
    if (redisPid) sources.push({ pid: redisPid, label: 'redis-server' });
    const { rows } = await client.query<{ pid: number; datname: string | null; application_name: string }>(
      `SELECT pid, datname, application_name FROM pg_stat_activity WHERE datname = $1 OR datname IS NULL`,
      [DATABASE],
    );
    for (const { pid, datname, application_name: name } of rows) {
      if (datname === null) sources.push({ pid, label: 'postgres background' });
      else if (name === BENCH_APPLICATION_NAME) sources.push({ pid, label: 'bench' });
      else sources.push({ pid, label: `postgres ← ${tree.get(Number(/ (\d+)$/.exec(name)?.[1])) ?? 'other'}` });
    }
    postmaster ??= rows.length ? (processStat(rows[0].pid)?.ppid ?? null) : null;
    if (postmaster) sources.push({ pid: postmaster, label: 'postgres background' });
    return sources;
  };
}

type Cpu = Awaited<ReturnType<CpuSampler['stop']>>;
/** The system's labels: every process of `npm start`, their Postgres backends, Redis (not this bench, not Postgres's background). */
const systemMs = (cpu: Cpu) => [...cpu.byLabel].filter(([label]) => label !== 'bench' && label !== 'postgres background').reduce((n, [, v]) => n + v.ms, 0);
const postgresMs = (cpu: Cpu) => [...cpu.byLabel].filter(([label]) => label.startsWith('postgres ← ')).reduce((n, [, v]) => n + v.ms, 0);

function printCpu(cpu: Cpu, per: number, unit: string): void {
  const rows = [...cpu.byLabel].filter(([label]) => label !== 'bench' && label !== 'postgres background').sort((a, b) => b[1].ms - a[1].ms);
  console.log(`    ${'process'.padEnd(30)} ${'CPU ms'.padStart(9)} ${`ms/${unit}`.padStart(10)}`);
  for (const [label, { ms, processes }] of rows)
    console.log(`    ${label.padEnd(30)} ${fmt(ms).padStart(9)} ${fmt(ms / per, 3).padStart(10)}   ${processes} process${processes === 1 ? '' : 'es'}`);
  console.log(`    ${'all (sum)'.padEnd(30)} ${fmt(systemMs(cpu)).padStart(9)} ${fmt(systemMs(cpu) / per, 3).padStart(10)}`);
  const background = cpu.byLabel.get('postgres background')?.ms ?? 0;
  console.log(
    `    not in the sum: Postgres background processes (shared by every database) ${fmt(background)} ms; this bench ${fmt(cpu.byLabel.get('bench')?.ms ?? 0)} ms`,
  );
}

interface Step {
  label: string;
  /** The largest backlogs seen, sampled every 500 ms: events not yet relayed, deliveries not yet answered. */
  backlog: { unrelayed: number; undelivered: number };
  report: LoadReport;
  arrivals: number[];
  delivered: number;
  owed: number;
  cpu: Cpu;
  drainedMs: number | null;
}

/** Sends one load, waits until every event of its accepted calls arrived (or DRAIN_SECONDS passed), with CPU over the whole of it. */
async function runStep(label: string, order: LoadOrder, loadgen: ChildProcess, receiver: ChildProcess, sampler: CpuSampler, client: pg.Pool): Promise<Step> {
  const backlog = { unrelayed: 0, undelivered: 0 };
  const watch = setInterval(() => {
    client
      .query<{ unrelayed: number; undelivered: number }>(
        `SELECT (SELECT count(*) FROM call_events WHERE relayed_at IS NULL)::int AS unrelayed,
                (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying'))::int AS undelivered`,
      )
      .then(({ rows: [r] }) => {
        backlog.unrelayed = Math.max(backlog.unrelayed, r.unrelayed);
        backlog.undelivered = Math.max(backlog.undelivered, r.undelivered);
      })
      .catch(() => undefined);
  }, 500);
  await sampler.start();
  const report = await ask<LoadReport>(loadgen, order);
  const owed = report.accepted * EVENTS_PER_CALL;
  const deadline = Date.now() + DRAIN_SECONDS * 1000;
  let answer = await ask<ReceiverAnswer>(receiver, { ask: 'arrivals', callIds: report.callIds });
  while (answer.received < owed && Date.now() < deadline) {
    await sleep(100);
    answer = await ask<ReceiverAnswer>(receiver, { ask: 'arrivals', callIds: report.callIds });
  }
  const cpu = await sampler.stop();
  clearInterval(watch);
  const drainedMs = answer.received >= owed ? wallClock() - report.lastAnswered : null;
  return { label, backlog, report, arrivals: answer.arrivals.sort((a, b) => a - b), delivered: answer.received, owed, cpu, drainedMs };
}

type Api = <T>(method: string, path: string, token: string, body?: unknown, tenantId?: string) => Promise<T>;

/**
 * The account the load runs on (BENCH_SHAPE): one organization with an agent, a contact and one
 * endpoint; or a reseller with one reseller-wide endpoint and BENCH_TENANTS tenants, each with its
 * starter agent and a contact, its limits its reseller's (the ceiling below).
 */
async function setUp(api: Api): Promise<{ key: string; targets: CallTarget[] }> {
  const reseller = SHAPE === 'reseller';
  if (!reseller && SHAPE !== 'org') throw new Error(`BENCH_SHAPE must be org or reseller, not ${SHAPE}`);
  const { api_key } = await api<CreatedOrg>('POST', '/admin/v1/orgs', OPERATOR_TOKEN, {
    name: 'Bench load',
    balance: '100000000',
    rates: { per_minute: '0.12', per_text: '0.01' },
    ceiling: { max_concurrent_calls: 10_000, max_calls_per_hour: 1_000_000 },
    ...(reseller ? { reseller: true, tenant_limit: TENANTS } : {}),
  });
  const key = api_key.key;
  await api('POST', '/v1/webhook-endpoints', key, {
    name: 'Bench',
    url: `http://127.0.0.1:${RECEIVER_PORT}/hooks`,
    secret: SECRET,
    outcomes: [],
    ...(reseller ? { tenant_events: 'all' } : {}),
  });
  const target = async (tenantId: string | null): Promise<CallTarget> => {
    const inside = tenantId ?? undefined;
    const agent = tenantId
      ? (await api<{ data: Array<{ id: string }> }>('GET', '/v1/agents', key, undefined, inside)).data[0]
      : await api<{ id: string }>('POST', '/v1/agents', key, { name: 'Bench agent' });
    const contact = await api<{ id: string }>('POST', '/v1/contacts', key, { name: 'Bench contact', phone_number: '+14155550100' }, inside);
    return { tenantId, body: JSON.stringify({ agent_id: agent.id, contact_id: contact.id, simulate: { duration_seconds: 1 } }) };
  };
  if (!reseller) return { key, targets: [await target(null)] };
  const targets: CallTarget[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const tenant = await api<{ id: string }>('POST', '/v1/tenants', key, { name: `Bench tenant ${i}`, timezone: 'UTC', industry: 'other' });
    targets.push(await target(tenant.id));
  }
  return { key, targets };
}

const held = (s: Step) =>
  s.report.accepted === s.report.sent &&
  s.delivered === s.owed &&
  percentile(s.report.latencies, 99) < GOAL.postP99 &&
  percentile(s.arrivals, 99) < GOAL.arrivalP99;

function rateRow(rate: number, s: Step, seconds = STEP_SECONDS): string {
  const l = s.report.latencies;
  const a = s.arrivals;
  const failed = Object.entries(s.report.statuses).filter(([status]) => status !== '201' && status !== '200');
  return [
    `${fmt(rate)}/s`.padStart(6),
    `${fmt(s.report.accepted / seconds)}/s${failed.length ? ` (${failed.map(([k, v]) => `${v}×${k}`).join(' ')})` : ''}`.padEnd(16),
    `${fmt(percentile(l, 50))} / ${fmt(percentile(l, 99))} / ${fmt(l[l.length - 1])}`.padStart(20),
    (a.length ? `${fmt(percentile(a, 50))} / ${fmt(percentile(a, 99))} / ${fmt(a[a.length - 1])}` : '-').padStart(22),
    `${fmt(s.delivered)}/${fmt(s.owed)}`.padStart(14),
    fmt(systemMs(s.cpu) / Math.max(1, s.delivered), 2).padStart(8),
    fmt(postgresMs(s.cpu) / Math.max(1, s.report.accepted), 2).padStart(8),
    fmt((systemMs(s.cpu) / 1000 / s.cpu.seconds) * 100).padStart(6) + '%',
    `${fmt(s.backlog.unrelayed)} / ${fmt(s.backlog.undelivered)}`.padStart(15),
    held(s) ? '  held' : '',
  ].join('  ');
}

async function main(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const databaseUrl = await benchDatabase(DATABASE, { fresh: true });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const stale = await scanKeys(redis, `${REDIS_PREFIX}:*`);
  if (stale.length) await redis.del(...stale);
  const redisPid = await redisServerPid(redis);
  redis.disconnect();
  const client = benchPool(databaseUrl);
  const base = `http://127.0.0.1:${PORT}`;

  // `npm start` at its defaults: every Ringlane setting this shell has is dropped but where the
  // service runs (its database, Redis prefix, port), the operator token, and receivers on this
  // machine being allowed. BENCH_SERVICE_ENV="A=1 B=2" adds settings, to compare (values URI-encoded: %20 for a space).
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(NODE_ENV|LOG_LEVEL|DATABASE_|REDIS_|WEBHOOK|SIM_|CALLS_|INTAKE_|WEB_CONCURRENCY|EVENT_|PORT$|OPERATOR_TOKEN)/.test(k))
      env[k] = v;
  }
  Object.assign(env, {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX,
    PORT: String(PORT),
    OPERATOR_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  });
  const extra = (process.env.BENCH_SERVICE_ENV ?? '').split(/\s+/).filter(Boolean);
  for (const pair of extra) env[pair.slice(0, pair.indexOf('='))] = decodeURIComponent(pair.slice(pair.indexOf('=') + 1));

  const sink = TRACING ? await childProcess(self, 'sink', [String(SINK_PORT)]) : null;
  if (sink) Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${SINK_PORT}` });
  const receiver = await childProcess(self, 'receiver', [String(RECEIVER_PORT)]);
  const loadgen = await childProcess(self, 'loadgen');
  // Its output is read and dropped, as a log collector would take it.
  const service = track(spawn(process.execPath, ['dist/scripts/start.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let logLines = 0;
  for (const stream of [service.stdout!, service.stderr!]) stream.on('data', (chunk: Buffer) => (logLines += chunk.toString().split('\n').length - 1));
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (service.exitCode !== null) throw new Error(`npm start exited (${service.exitCode})`);
      const ok = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(DISTINCT application_name)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'ringlane %'`,
        [DATABASE],
      );
      if (ok && rows[0].n >= 7) break;
      if (Date.now() > deadline) throw new Error('npm start did not bring every process up within 120 s');
      await sleep(250);
    }
    const sampler = new CpuSampler(systemSources(client, service.pid!, redisPid));
    const processes = [...descendants(service.pid!).values()];
    console.log(
      `bench:load — \`npm start\` at its defaults${extra.length ? ` plus ${extra.join(' ')}` : ''}${TRACING ? ', tracing on (OTLP to a sink)' : ''} (${processes.length} processes: ${processes.join(', ')}); ` +
        `own database ${DATABASE}, Redis prefix ${REDIS_PREFIX}; receiver and load generator in processes of their own; ${fmt((await import('node:os')).cpus().length)} cores`,
    );

    const api: Api = async <T>(method: string, path: string, token: string, body?: unknown, tenantId?: string): Promise<T> => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(tenantId ? { 'x-tenant-id': tenantId } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<T>;
    };
    const { key, targets } = await setUp(api);
    console.log(
      SHAPE === 'reseller'
        ? `shape: one reseller-wide endpoint over ${fmt(targets.length)} tenants, the calls round-robin over them`
        : 'shape: one endpoint in one organization',
    );
    const order = (o: Partial<LoadOrder>): LoadOrder => ({ base, key, targets, ...o });

    if (PHASES.has('idle')) {
      // Past the settling after start and setup: about 100 s after it started, each process makes one
      // large collection (70-220 ms of CPU each, once), and for a minute after its last work V8 still
      // tidies up. Over a minute: the CPU figures come in 10 ms ticks per process.
      await sleep(IDLE_SETTLE_SECONDS * 1000);
      await sampler.start();
      await sleep(IDLE_SECONDS * 1000);
      const cpu = await sampler.stop();
      const share = (systemMs(cpu) / 1000 / cpu.seconds) * 100;
      console.log(`\nidle (no traffic, ${fmt(cpu.seconds, 1)} s): ${fmt(share, 2)}% of one core for every process together   (goal < ${GOAL.idleCore}%)`);
      printCpu(cpu, cpu.seconds, 's');
      // Redis is shared and keeps house on its own (its `hz` timer), with or without our clients.
      const redis = cpu.byLabel.get('redis-server')?.ms ?? 0;
      const serviceMs = systemMs(cpu) - postgresMs(cpu) - redis;
      const ofCore = (ms: number) => `${fmt((ms / 1000 / cpu.seconds) * 100, 2)}%`;
      console.log(
        `    the service's processes ${ofCore(serviceMs)} of one core; with their Postgres backends ${ofCore(serviceMs + postgresMs(cpu))}; Redis ${ofCore(redis)}`,
      );
    }

    if (PHASES.has('api')) {
      const tool = await loadGenerator();
      const headers = { authorization: `Bearer ${key}` };
      const authedUrl = `${base}/v1/api-keys`;
      const answer = await fetch(authedUrl, { headers }).then((r) => r.text());
      const bareUrl = `http://127.0.0.1:${BARE_PORT}/v1/api-keys`;
      const bare = await startServer('dist/scripts/bench/bare-server.js', { PORT: String(BARE_PORT), BARE_BODY: answer }, bareUrl);
      try {
        await load(tool, authedUrl, headers, 50, 2);
        await load(tool, bareUrl, {}, 50, 2);
        const authed = [];
        const plain = [];
        // CPU over the authenticated rounds only: every process of `npm start` (the supervisor
        // relays each log line), their Postgres backends, Redis.
        const cpuMs = new Map<string, number>();
        const bareSampler = new CpuSampler(() => Promise.resolve([{ pid: bare.pid!, label: 'bare' }]));
        let bareMs = 0;
        for (let round = 0; round < 3; round++) {
          await sampler.start();
          authed.push(await load(tool, authedUrl, headers, 50, 5));
          for (const [label, { ms }] of (await sampler.stop()).byLabel) cpuMs.set(label, (cpuMs.get(label) ?? 0) + ms);
          await bareSampler.start();
          plain.push(await load(tool, bareUrl, {}, 50, 5));
          bareMs += (await bareSampler.stop()).byLabel.get('bare')?.ms ?? 0;
        }
        const a = { rps: median(authed.map((r) => r.rps)), p99: median(authed.map((r) => r.p99)), failures: authed.reduce((n, r) => n + r.failures, 0) };
        const b = { rps: median(plain.map((r) => r.rps)), p99: median(plain.map((r) => r.p99)) };
        console.log(`\nAPI on the idle platform (${tool}, 50 keep-alive connections, median of 3 alternating rounds of 5 s):`);
        console.log(`  authenticated GET /v1/api-keys  ${fmt(a.rps)} req/s, p99 ${fmt(a.p99, 1)} ms, ${a.failures} failures`);
        console.log(`  bare Express, same body         ${fmt(b.rps)} req/s, p99 ${fmt(b.p99, 1)} ms`);
        console.log(`  ratio ${fmt(a.rps / b.rps, 2)}   (goal ≥ ${GOAL.apiRatio}, p99 < ${GOAL.apiP99} ms)`);
        const requests = authed.reduce((n, r) => n + r.rps * 5, 0);
        const served = [...cpuMs].filter(([label, ms]) => label !== 'bench' && label !== 'postgres background' && ms > 0).sort((x, y) => y[1] - x[1]);
        const total = served.reduce((n, [, ms]) => n + ms, 0);
        console.log(
          `  CPU ms per authenticated request ${fmt(total / requests, 3)}: ${served.map(([label, ms]) => `${label} ${fmt(ms / requests, 3)}`).join(', ')}; bare ${fmt(bareMs / plain.reduce((n, r) => n + r.rps * 5, 0), 3)}`,
        );
      } finally {
        await stopServer(bare);
      }
    }

    const warm = await runStep('warm-up', order({ rate: 50, seconds: 10 }), loadgen, receiver, sampler, client);
    console.log(
      `\nwarm-up, not in the table: 10 s at 50 calls/s; POST p99 ${fmt(percentile(warm.report.latencies, 99))} ms, arrival p99 ${fmt(percentile(warm.arrivals, 99))} ms`,
    );
    if (BARRIER) await meetAtBarrier(BARRIER);

    let highest = 0;
    if (PHASES.has('rates')) {
      console.log(
        `\nopen model: POST /v1/calls on a clock, ${STEP_SECONDS} s per rate; each step until its last event arrived (at most ${DRAIN_SECONDS} s more)`,
      );
      console.log(
        '  rate   accepted          POST p50/p99/max ms   arrival p50/p99/max ms      delivered  CPU ms/ev  PG ms/call  cores  max backlog: unrelayed / undelivered  (held: every call accepted, all delivered, POST p99 < 250 ms, arrival p99 < 1 s)',
      );
      let misses = 0;
      for (const rate of RATES) {
        const step = await runStep(`${rate}/s`, order({ rate, seconds: STEP_SECONDS }), loadgen, receiver, sampler, client);
        console.log(rateRow(rate, step));
        if (BREAKDOWN) printCpu(step.cpu, step.delivered, 'event');
        if (held(step)) highest = rate;
        misses = held(step) ? 0 : misses + 1;
        if (step.drainedMs === null || (misses >= 2 && !KEEP_GOING)) {
          console.log(`  (stopped: ${step.drainedMs === null ? `not drained ${DRAIN_SECONDS} s after the last POST` : 'two rates in a row not held'})`);
          break;
        }
        await sleep(3000);
      }
      console.log(`highest rate held: ${highest ? `${fmt(highest)} calls/s (${fmt(highest * EVENTS_PER_CALL)} events/s)` : 'none'}   (goal ≥ 250 calls/s)`);
    }

    if (PHASES.has('soak')) {
      const steps = Math.round((SOAK_MINUTES * 60) / SOAK_STEP_SECONDS);
      console.log(
        `\nsoak: ${fmt(SOAK_RATE)} calls/s for ${fmt(SOAK_MINUTES)} minutes, a row per ${SOAK_STEP_SECONDS} s of load (each until its last event arrived)`,
      );
      for (let i = 0; i < steps; i++) {
        const step = await runStep(`soak ${i + 1}`, order({ rate: SOAK_RATE, seconds: SOAK_STEP_SECONDS }), loadgen, receiver, sampler, client);
        console.log(rateRow(SOAK_RATE, step, SOAK_STEP_SECONDS).replace(/^\s*\S+/, `${fmt(((i + 1) * SOAK_STEP_SECONDS) / 60, 1)} min`.padStart(8)));
      }
    }

    if (PHASES.has('burst')) {
      const s = await runStep('burst', order({ calls: BURST_CALLS, inFlight: BURST_IN_FLIGHT }), loadgen, receiver, sampler, client);
      const l = s.report.latencies;
      const postSeconds = (s.report.lastAnswered - s.report.firstSent) / 1000;
      console.log(`\nburst: ${fmt(BURST_CALLS)} calls, ${BURST_IN_FLIGHT} POSTs in flight (closed model)`);
      console.log(
        `  accepted ${fmt(s.report.accepted)} at ${fmt(s.report.accepted / postSeconds)} calls/s; POST p50 ${fmt(percentile(l, 50))} ms, p99 ${fmt(percentile(l, 99))} ms; ` +
          `delivered ${fmt(s.delivered)}/${fmt(s.owed)}, arrival p50 ${fmt(percentile(s.arrivals, 50))} ms, p99 ${fmt(percentile(s.arrivals, 99))} ms`,
      );
      console.log(
        `  whole-system CPU per delivered event ${fmt(systemMs(s.cpu) / s.delivered, 2)} ms (goal ≤ ${GOAL.cpuPerEvent}); Postgres CPU per call lifecycle ${fmt(postgresMs(s.cpu) / s.report.accepted, 2)} ms (goal ≤ ${GOAL.postgresPerCall})`,
      );
      printCpu(s.cpu, s.delivered, 'event');
    }
    console.log(`\nlog lines written by the service during the bench: ${fmt(logLines)}`);
    if (sink) {
      const { requests, spans, byName } = await ask<SinkAnswer>(sink, 'count');
      console.log(
        `tracing on: the sink got ${fmt(spans)} spans in ${fmt(requests)} OTLP requests (its own CPU is not in the figures, as a collector's elsewhere would not be); the most:`,
      );
      const most = Object.entries(byName)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15);
      for (const [name, n] of most) console.log(`    ${name.padEnd(50)} ${fmt(n).padStart(8)}`);
    }
  } finally {
    await stopServer(service);
    await client.end();
  }
}

const role = process.argv[2];
if (role === 'receiver') receiverMain(Number(process.argv[3]));
else if (role === 'sink') sinkMain(Number(process.argv[3]));
else if (role === 'loadgen') void loadgenMain();
else runBench(main);
