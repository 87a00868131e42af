// npm run bench:auth — authenticated `GET /v1/api-keys` (API key auth, org scoping, a real
// Postgres query) against a bare Express route answering the same JSON from memory, in the
// same run, at the same concurrency. Prints both and their ratio.
import { benchDatabase, load, startServer, stopServer } from './harness.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const OPERATOR_TOKEN = 'bench-operator-token-0123456789';
const API_PORT = 3901;
const BARE_PORT = 3902;

async function main(): Promise<void> {
  const databaseUrl = await benchDatabase('ringlane_bench');
  const api = await startServer(
    'dist/src/server.js',
    { DATABASE_URL: databaseUrl, PORT: String(API_PORT), OPERATOR_TOKEN, LOG_LEVEL: 'warn', REDIS_PREFIX: '{ringlane_bench}', NODE_ENV: 'production' },
    `http://127.0.0.1:${API_PORT}/readyz`,
  );
  let bare;
  try {
    const created = await fetch(`http://127.0.0.1:${API_PORT}/admin/v1/orgs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Co' }),
    }).then((r) => r.json());
    const headers = { authorization: `Bearer ${created.api_key.key}` };
    const url = `http://127.0.0.1:${API_PORT}/v1/api-keys`;
    const body = await fetch(url, { headers }).then((r) => r.text());

    const authed = await load(url, headers, CONNECTIONS, SECONDS);
    bare = await startServer('dist/scripts/bench/bare-server.js', { PORT: String(BARE_PORT), BARE_BODY: body }, `http://127.0.0.1:${BARE_PORT}/v1/api-keys`);
    const baseline = await load(`http://127.0.0.1:${BARE_PORT}/v1/api-keys`, {}, CONNECTIONS, SECONDS);

    const row = (name: string, r: typeof authed) =>
      `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   errors ${r.errors}, non-2xx ${r.non2xx}`;
    console.log(`bench:auth — ${CONNECTIONS} connections, ${SECONDS} s each (after a 2 s warm-up)`);
    console.log(row('authenticated GET /v1/api-keys', authed));
    console.log(row('bare Express route, same JSON', baseline));
    console.log(`ratio (authenticated / bare): ${(authed.rps / baseline.rps).toFixed(2)}   target ≥ 0.50; p99 target < 10 ms`);
  } finally {
    await stopServer(api);
    if (bare) await stopServer(bare);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
