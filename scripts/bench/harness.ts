import { execFile, execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { ensureDatabase, runMigrations } from '../../src/migrations/migrate.js';
import { procfileProcesses } from '../procfile.js';

/** Creates (if needed) and migrates the benchmark's own database; returns its URL. */
export async function benchDatabase(name: string, options: { fresh?: boolean } = {}): Promise<string> {
  const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  if (options.fresh) {
    // A run that reads back everything it wrote (or appends to the append-only ledger) starts empty.
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  }
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  await runMigrations(url.toString());
  return url.toString();
}

/** Node's options on every Procfile line: the preload that starts tracing when it is configured. */
const PROCFILE_NODE_OPTIONS = ['--import', './dist/src/lib/telemetry-preload.js'];

/**
 * Starts a compiled entry with Node's options (the Procfile's by default) and polls `ready()` every
 * 100 ms for up to 20 s (processes without a port). With BENCH_CPU_PROFILE=<dir>, each process writes
 * a V8 CPU profile there on exit.
 */
export async function startProcess(
  entry: string,
  env: Record<string, string>,
  ready: (child: ChildProcess) => Promise<boolean>,
  nodeOptions = PROCFILE_NODE_OPTIONS,
): Promise<ChildProcess> {
  const profileDir = process.env.BENCH_CPU_PROFILE;
  const execArgv = [...nodeOptions, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])];
  const child = track(fork(entry, { env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (hasExited(child)) throw new Error(`${entry} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      if (await ready(child)) return child;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stopServer(child);
      throw new Error(`${entry} did not start`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a compiled entry point with `env` and waits until `readyUrl` answers (see startProcess). */
export function startServer(entry: string, env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  return startProcess(entry, env, async () => (await fetch(readyUrl)).ok);
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Children started and not stopped: runBench stops them however it ends. */
const children = new Set<ChildProcess>();

/** Registers a child so it is stopped when the benchmark ends, even on failure. */
export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** How long a process gets to finish its in-flight work on SIGTERM before it is killed. */
const STOP_GRACE_MS = 30_000;

/** SIGTERM, then SIGKILL after the grace; resolves once it has exited. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Stops every child still running, all at once. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stopServer));
}

/** A running process of the Procfile: its line's name and its child. */
export interface ProcfileProcess {
  name: string;
  child: ChildProcess;
}

/**
 * Starts the Procfile's lines (all but `release`, or `only`): `web` is ready when /readyz answers,
 * the others once they hold a Postgres connection (application_name ends with the pid).
 * Registering consumers may still be under way: a first load proves the system end to end.
 */
export async function startProcfile(client: pg.Pool, env: Record<string, string>, only?: string[]): Promise<ProcfileProcess[]> {
  const lines = procfileProcesses(process.cwd()).filter((p) => !only || only.includes(p.name));
  const database = new URL(env.DATABASE_URL).pathname.slice(1);
  const connected = async (child: ChildProcess) => {
    const { rowCount } = await client.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% ' || $2`, [
      database,
      String(child.pid),
    ]);
    return (rowCount ?? 0) > 0;
  };
  const answers = async () => (await fetch(`http://127.0.0.1:${env.PORT}/readyz`)).ok;
  return Promise.all(
    lines.map(async ({ name, command }) => {
      // Procfile lines are `node [options] <compiled entry>`; started with fork so that BENCH_CPU_PROFILE applies.
      const [program, ...args] = command.split(/\s+/);
      const entry = args.pop();
      if (program !== 'node' || !entry?.endsWith('.js')) throw new Error(`Procfile ${name}: expected "node [options] <entry>", got "${command}"`);
      return { name, child: await startProcess(entry, env, name === 'web' ? answers : connected, args) };
    }),
  );
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

const run = promisify(execFile);

/** wrk (C, one thread) when installed: it takes far less CPU than a Node load generator. */
export async function loadGenerator(): Promise<'wrk' | 'autocannon'> {
  if (process.env.BENCH_LOADGEN === 'autocannon') return 'autocannon';
  return run('wrk', ['--version']).then(
    () => 'wrk' as const,
    (err: { stdout?: string }) => (err.stdout?.includes('wrk') ? ('wrk' as const) : ('autocannon' as const)),
  );
}

const WRK_REPORT = `done = function(summary, latency, requests)
  local failures = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status
  io.write(string.format("RESULT %f %f %f %d\\n", summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000, failures))
end`;

async function withWrk(url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<LoadResult> {
  const { writeFile } = await import('node:fs/promises');
  const script = '/tmp/ringlane-bench-report.lua';
  await writeFile(script, WRK_REPORT);
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, ...headerArgs, url]);
  const [rps, p50, p99, failures] = /RESULT (\S+) (\S+) (\S+) (\d+)/.exec(stdout)!.slice(1).map(Number);
  return { rps, p50, p99, failures };
}

async function withAutocannon(url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<LoadResult> {
  const r = await autocannon({ url, headers, connections, duration: seconds });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failures: r.errors + r.non2xx };
}

/** Drives `url` for `seconds` at `connections` with the chosen load generator. */
export function load(tool: 'wrk' | 'autocannon', url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<LoadResult> {
  return tool === 'wrk' ? withWrk(url, headers, connections, seconds) : withAutocannon(url, headers, connections, seconds);
}

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Runs `main` and exits; however it ends (even SIGINT/SIGTERM/SIGHUP), every child is stopped first. */
export function runBench(main: () => Promise<void>): void {
  let finishing = false;
  const finish = (code: number) => {
    finishing = true;
    void stopAll().finally(() => process.exit(code));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`${signal}: stopping the benchmark's processes\n`);
      finish(130);
    });
  }
  main().then(
    () => finish(0),
    (err) => {
      // Once stopping on a signal, main fails because its processes go away: not news.
      if (finishing) return;
      console.error(err);
      finish(1);
    },
  );
}

/** What `POST /admin/v1/orgs` answers, as far as the benchmarks read it. */
export interface CreatedOrg {
  org: { id: string };
  api_key: { key: string };
}

/**
 * JSON over HTTP with at most `connections` requests in flight; a non-2xx answer throws. `T`: the answer's shape;
 * `headers`: more request headers (`X-Tenant-Id`).
 */
export function apiClient(base: string, connections: number) {
  const dispatcher = new Agent({ connections, pipelining: 1 });
  return {
    request: async <T = unknown>(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> => {
      const res = await undiciFetch(`${base}${path}`, {
        method,
        headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher,
      });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json as T;
    },
    close: () => dispatcher.close(),
  };
}

let clockTicks: number | undefined;

export interface ProcessStat {
  cpuMs: number;
  ppid: number;
  /** Clock ticks since boot: tells a reused pid from the process seen before. */
  startTicks: number;
}

export function processStat(pid: number): ProcessStat | null {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 4 (ppid), 14 (utime), 15 (stime) and 22 (starttime), counted from 3 here.
  return { ppid: Number(f[1]), cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / clockTicks, startTicks: Number(f[19]) };
}

export interface CpuSource {
  pid: number;
  label: string;
}

/**
 * CPU time per label over a window. `discover` is asked at every sample, so processes appearing mid-window
 * count from zero; one that exits keeps its last sample, hence periodic sampling rather than both ends only.
 */
export class CpuSampler {
  private readonly seen = new Map<number, { label: string; startTicks: number; first: number; last: number }>();
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> = Promise.resolve();
  private startedAt = 0;

  constructor(
    private readonly discover: () => Promise<CpuSource[]>,
    private readonly intervalMs = 250,
  ) {}

  async start(): Promise<void> {
    this.seen.clear();
    this.startedAt = performance.now();
    await this.sample(true);
    this.timer = setInterval(() => {
      // One sample at a time: a slow pg_stat_activity read must not pile samples up.
      this.sampling = this.sampling.then(() => this.sample(false)).catch(() => undefined);
    }, this.intervalMs);
  }

  async stop(): Promise<{ seconds: number; byLabel: Map<string, { ms: number; processes: number }> }> {
    clearInterval(this.timer);
    await this.sampling;
    await this.sample(false);
    const byLabel = new Map<string, { ms: number; processes: number }>();
    for (const { label, first, last } of this.seen.values()) {
      const entry = byLabel.get(label) ?? { ms: 0, processes: 0 };
      entry.ms += last - first;
      entry.processes++;
      byLabel.set(label, entry);
    }
    return { seconds: (performance.now() - this.startedAt) / 1000, byLabel };
  }

  private async sample(initial: boolean): Promise<void> {
    const labels = new Map((await this.discover()).map((s) => [s.pid, s.label]));
    // Known processes too (a backend whose client went away may still run).
    for (const pid of new Set([...labels.keys(), ...this.seen.keys()])) {
      const stat = processStat(pid);
      const entry = this.seen.get(pid);
      if (entry) {
        if (stat && stat.startTicks === entry.startTicks) entry.last = stat.cpuMs;
      } else if (stat) {
        this.seen.set(pid, { label: labels.get(pid)!, startTicks: stat.startTicks, first: initial ? stat.cpuMs : 0, last: stat.cpuMs });
      }
    }
  }
}

/** Null when the redis-server is not on this machine. */
export async function redisServerPid(redis: Redis): Promise<number | null> {
  const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  return pid && processStat(pid) ? pid : null;
}

/** The application_name of a benchmark's own Postgres connections (bookkeeping, sampling). */
export const BENCH_APPLICATION_NAME = 'ringlane-bench';

/** A pool (sampling runs beside bookkeeping), named so its backends are not counted as the system's. */
export function benchPool(url: string): pg.Pool {
  return new pg.Pool({ connectionString: url, application_name: BENCH_APPLICATION_NAME, max: 4 });
}

/**
 * Each Procfile process, the Postgres backends labelled `postgres ← <process>` by the pid in their
 * application_name (`bench`, `other` for autovacuum and the like), `postgres background`,
 * `redis-server`, and this process as `bench`; asked again at every sample.
 */
export function systemCpuSources(client: pg.Pool, database: string, processes: ProcfileProcess[], redisPid: number | null): () => Promise<CpuSource[]> {
  const names = new Map(processes.map((p) => [p.child.pid!, p.name]));
  let postmaster: number | null = null;
  return async () => {
    const { rows } = await client.query<{ pid: number; datname: string | null; application_name: string }>(
      `SELECT pid, datname, application_name FROM pg_stat_activity WHERE datname = $1 OR datname IS NULL`,
      [database],
    );
    const sources: CpuSource[] = processes.map((p) => ({ pid: p.child.pid!, label: p.name }));
    sources.push({ pid: process.pid, label: 'bench' });
    if (redisPid) sources.push({ pid: redisPid, label: 'redis-server' });
    for (const { pid, datname, application_name: name } of rows) {
      if (datname === null) {
        sources.push({ pid, label: 'postgres background' });
        continue;
      }
      const served = name === BENCH_APPLICATION_NAME ? 'bench' : (names.get(Number(/ (\d+)$/.exec(name)?.[1])) ?? 'other');
      sources.push({ pid, label: `postgres ← ${served}` });
    }
    postmaster ??= rows.length ? (processStat(rows[0].pid)?.ppid ?? null) : null;
    if (postmaster) sources.push({ pid: postmaster, label: 'postgres background' });
    return sources;
  };
}

/** The p-th percentile (nearest rank) of ascending `sorted`. */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
