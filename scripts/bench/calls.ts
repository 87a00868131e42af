// npm run bench:calls — simulated calls through the API and one `calls` worker: calls completed and
// events written per second. See docs/operations.md#benchmarks.
import { Agent, fetch as undiciFetch } from 'undici';
import pg from 'pg';
import { benchDatabase, startServer, stopServer, runBench, type CreatedOrg } from './harness.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const OPERATOR_TOKEN = 'bench-operator-token-0123456789';
const PORT = 3903;
const BASE = `http://127.0.0.1:${PORT}`;

async function main(): Promise<void> {
  const databaseUrl = await benchDatabase('ringlane_bench_calls');
  const env = {
    DATABASE_URL: databaseUrl,
    PORT: String(PORT),
    OPERATOR_TOKEN,
    LOG_LEVEL: 'warn',
    REDIS_PREFIX: 'ringlane_bench_calls',
    NODE_ENV: 'production',
    SIM_RING_MS: '10',
    SIM_SECOND_MS: '1',
  };
  const api = await startServer('dist/src/server.js', env, `${BASE}/readyz`);
  const worker = await startServer('dist/workers/calls.js', env, `${BASE}/readyz`);
  const dispatcher = new Agent({ connections: IN_FLIGHT, pipelining: 1 });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const post = async <T = unknown>(path: string, token: string, body: unknown): Promise<T> => {
      const res = await undiciFetch(`${BASE}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher,
      });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json as T;
    };
    const { org, api_key } = await post<CreatedOrg>('/admin/v1/orgs', OPERATOR_TOKEN, {
      name: 'Bench calls',
      balance: '1000000',
      rates: { per_minute: '0.12', per_text: '0.01' },
      ceiling: { max_concurrent_calls: 10_000, max_calls_per_hour: 1_000_000 },
    });
    const key = api_key.key;
    const agent = await post<{ id: string }>('/v1/agents', key, { name: 'Bench agent' });
    const contacts: Array<{ id: string }> = [];
    for (let i = 0; i < 100; i++)
      contacts.push(await post<{ id: string }>('/v1/contacts', key, { name: `C${i}`, phone_number: `+1415555${String(i).padStart(4, '0')}` }));

    const started = Date.now();
    let next = 0;
    const lanes = Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CALLS) {
        const i = next++;
        await post('/v1/calls', key, { agent_id: agent.id, contact_id: contacts[i % contacts.length].id, simulate: { duration_seconds: 5 } });
      }
    });
    await Promise.all(lanes);
    const posted = Date.now();
    for (;;) {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM calls WHERE org_id = $1 AND status = 'completed'`, [org.id]);
      if (rows[0].n >= CALLS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const finished = Date.now();
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM call_events WHERE org_id = $1`, [org.id]);
    const seconds = (finished - started) / 1000;
    console.log(`bench:calls — ${CALLS} calls, ${IN_FLIGHT} requests in flight, API + 1 calls worker (SIM_RING_MS=10, SIM_SECOND_MS=1, 5 s calls)`);
    console.log(`POSTs accepted:      ${(CALLS / ((posted - started) / 1000)).toFixed(0)} calls/s  (${((posted - started) / 1000).toFixed(1)} s)`);
    console.log(`calls completed:     ${(CALLS / seconds).toFixed(0)} calls/s  (first POST to last call's end: ${seconds.toFixed(1)} s)   target ≥ 500`);
    console.log(`call events written: ${(rows[0].n / seconds).toFixed(0)} events/s (${rows[0].n} events)`);
  } finally {
    await client.end();
    await dispatcher.close();
    await stopServer(worker);
    await stopServer(api);
  }
}

runBench(main);
