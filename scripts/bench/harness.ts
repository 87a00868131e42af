import { fork, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { ensureDatabase, runMigrations } from '../../src/lib/migrate.js';

/** Creates (if needed) and migrates the benchmark's own database; returns its URL. */
export async function benchDatabase(name: string): Promise<string> {
  const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  await runMigrations(url.toString());
  return url.toString();
}

/** Starts a compiled entry point with `env` and waits until `readyUrl` answers. */
export async function startServer(entry: string, env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  const child = fork(entry, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(readyUrl)).ok) return child;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${entry} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
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
  errors: number;
  non2xx: number;
}

/** Runs autocannon against `url`: a short warm-up, then the measured run. */
export async function load(url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<LoadResult> {
  await autocannon({ url, headers, connections, duration: 2 });
  const r = await autocannon({ url, headers, connections, duration: seconds });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}
