import { execFile, fork, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { ensureDatabase, runMigrations } from '../../src/lib/migrate.js';

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

/**
 * Starts a compiled entry point with `env` and waits until `ready()` holds (polled every 100 ms,
 * for 20 s at most): for processes without an HTTP port, such as workers.
 * With BENCH_CPU_PROFILE=<dir>, each process writes a V8 CPU profile there when it exits.
 */
export async function startProcess(entry: string, env: Record<string, string>, ready: () => Promise<boolean>): Promise<ChildProcess> {
  const profileDir = process.env.BENCH_CPU_PROFILE;
  const execArgv = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = fork(entry, { env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${entry} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      if (await ready()) return child;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${entry} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a compiled entry point with `env` and waits until `readyUrl` answers (see startProcess). */
export function startServer(entry: string, env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  return startProcess(entry, env, async () => (await fetch(readyUrl)).ok);
}

export async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** Connection errors plus non-2xx answers. */
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

/** Runs a benchmark's main function and exits with its outcome (servers it started are children). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
