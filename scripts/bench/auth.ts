// npm run bench:auth — the authenticated API against a bare Express route, in alternating rounds:
// medians, their ratio, CPU ms per request. See docs/operations.md#benchmarks.
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import {
  benchDatabase,
  benchPool,
  CpuSampler,
  load,
  loadGenerator,
  median,
  redisServerPid,
  startServer,
  stopServer,
  systemCpuSources,
  type CreatedOrg,
  type LoadResult,
  runBench,
} from './harness.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const OPERATOR_TOKEN = 'bench-operator-token-0123456789';
const API_PORT = 3901;
const BARE_PORT = 3902;

async function main(): Promise<void> {
  const tool = await loadGenerator();
  const databaseUrl = await benchDatabase('ringlane_bench');
  const client = benchPool(databaseUrl);
  // Its pid, to count its CPU.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const redisPid = await redisServerPid(redis);
  redis.disconnect();
  const servers: ChildProcess[] = [];
  try {
    const api = await startServer(
      'dist/src/server.js',
      { DATABASE_URL: databaseUrl, PORT: String(API_PORT), OPERATOR_TOKEN, REDIS_PREFIX: 'ringlane_bench' },
      `http://127.0.0.1:${API_PORT}/readyz`,
    );
    servers.push(api);
    const created = await fetch(`http://127.0.0.1:${API_PORT}/admin/v1/orgs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Co' }),
    }).then((r) => r.json() as Promise<CreatedOrg>);
    const headers = { authorization: `Bearer ${created.api_key.key}` };
    const authedUrl = `http://127.0.0.1:${API_PORT}/v1/api-keys`;
    const body = await fetch(authedUrl, { headers }).then((r) => r.text());
    const bareUrl = `http://127.0.0.1:${BARE_PORT}/v1/api-keys`;
    servers.push(await startServer('dist/scripts/bench/bare-server.js', { PORT: String(BARE_PORT), BARE_BODY: body }, bareUrl));

    // Warm both (JIT, pools, caches), then alternate so machine noise hits both alike.
    await load(tool, authedUrl, headers, CONNECTIONS, 2);
    await load(tool, bareUrl, {}, CONNECTIONS, 2);
    const authed: LoadResult[] = [];
    const bare: LoadResult[] = [];
    const apiSources = systemCpuSources(client, new URL(databaseUrl).pathname.slice(1), [{ name: 'web', child: api }], redisPid);
    const apiCpu = new Map<string, number>();
    let bareCpu = 0;
    /** Adds the server side's CPU ms: the process, its Postgres backends, Redis. */
    const serving = new Set(['web', 'postgres ← web', 'redis-server', 'bare']);
    const measured = async (sampler: CpuSampler, round: () => Promise<LoadResult>, add: (label: string, ms: number) => void) => {
      await sampler.start();
      const result = await round();
      for (const [label, { ms }] of (await sampler.stop()).byLabel) if (serving.has(label)) add(label, ms);
      return { ...result, requests: result.rps * SECONDS };
    };
    let apiRequests = 0;
    let bareRequests = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const a = await measured(
        new CpuSampler(apiSources),
        () => load(tool, authedUrl, headers, CONNECTIONS, SECONDS),
        (label, ms) => apiCpu.set(label, (apiCpu.get(label) ?? 0) + ms),
      );
      const b = await measured(
        new CpuSampler(async () => [{ pid: servers[1].pid!, label: 'bare' }]),
        () => load(tool, bareUrl, {}, CONNECTIONS, SECONDS),
        (_, ms) => (bareCpu += ms),
      );
      authed.push(a);
      bare.push(b);
      apiRequests += a.requests;
      bareRequests += b.requests;
    }

    const summary = (results: LoadResult[]) => ({
      rps: median(results.map((r) => r.rps)),
      p50: median(results.map((r) => r.p50)),
      p99: median(results.map((r) => r.p99)),
      failures: results.reduce((n, r) => n + r.failures, 0),
    });
    const a = summary(authed);
    const b = summary(bare);
    const row = (name: string, r: ReturnType<typeof summary>) =>
      `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   failures ${r.failures}`;
    console.log(`bench:auth — ${tool}, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${SECONDS} s`);
    console.log(row('authenticated GET /v1/api-keys', a));
    console.log(row('bare Express route, same JSON', b));
    console.log(`ratio (authenticated / bare): ${(a.rps / b.rps).toFixed(2)}   (target ≥ 0.50; p99 target < 25 ms)`);
    const perRequest = (ms: number, requests: number) => (ms / requests).toFixed(3);
    const apiParts = [...apiCpu.entries()].sort((x, y) => y[1] - x[1]).map(([label, ms]) => `${label} ${perRequest(ms, apiRequests)}`);
    const apiTotal = [...apiCpu.values()].reduce((n, ms) => n + ms, 0);
    console.log(`CPU ms per request: authenticated ${perRequest(apiTotal, apiRequests)} (${apiParts.join(', ')}); bare ${perRequest(bareCpu, bareRequests)}`);
  } finally {
    for (const server of servers) await stopServer(server);
    await client.end();
  }
}

runBench(main);
