// npm run bench:usage — GET /v1/tenants/{id}/usage over a long history (1M ledger rows, 200k calls, 400
// days): p50/p99 of 366-day, default and plain reads, and the ratio (target ≤ 3). See docs/operations.md#benchmarks.
import pg from 'pg';
import { createDataSource } from '../../src/lib/db.js';
import { formatMoney } from '../../src/lib/money.js';
import { UsageRollup } from '../../src/usage/usage-rollup.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { apiClient, benchDatabase, percentile, startServer, stopServer, runBench, type CreatedOrg } from './harness.js';

const LEDGER_ROWS = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
const CALL_ROWS = Number(process.env.BENCH_CALL_ROWS ?? 200_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const HISTORY_DAYS = 400;
const DATABASE = 'ringlane_bench_usage';
const OPERATOR_TOKEN = 'bench-operator-token-0123456789';
const PORT = 3904;
const BASE = `http://127.0.0.1:${PORT}`;

/**
 * Set-based seed with row triggers off (`session_replication_role = replica`): the balance trigger would
 * update the reseller's row a million times in one transaction; the balance is set once at the end.
 */
async function seed(client: pg.Client, resellerId: string, tenantId: string, agentId: string): Promise<void> {
  await client.query('BEGIN');
  await client.query(`SET LOCAL session_replication_role = replica`);
  await client.query(
    `INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, reference, description, created_at)
     SELECT 'led_bench' || i, $1, $2,
            CASE WHEN i % 5 = 0 THEN 'text' ELSE 'call' END,
            CASE WHEN i % 5 = 0 THEN -50000 ELSE -((i % 300) + 1) * 10001 END,
            'bench:' || i, 'bench',
            now() - make_interval(days => $4) + (i * ($4 * 86400.0 / $3)) * interval '1 second'
       FROM generate_series(1, $3::int) AS i`,
    [resellerId, tenantId, LEDGER_ROWS, HISTORY_DAYS],
  );
  // Each text's message row, with its charge, billed at a resale per_text.
  await client.query(
    `INSERT INTO messages (id, org_id, payer_org_id, from_number, to_number, body, charge_micros, billable_micros, created_at, updated_at, sent_at)
     SELECT 'msg_bench' || substr(id, 10), subject_org_id, org_id, '+14155550199', '+14155550100', 'bench', -amount_micros, 20000, created_at, created_at, created_at
       FROM ledger_entries WHERE org_id = $1 AND kind = 'text' AND id LIKE 'led_bench%'`,
    [resellerId],
  );
  await client.query(
    `INSERT INTO calls (id, org_id, payer_org_id, agent_id, direction, status, outcome, end_reason, phone_number, simulate,
                        last_sequence, created_at, updated_at, dialed_at, started_at, ended_at, duration_seconds, charge_micros, billable_micros)
     SELECT 'call_bench' || i, $2, $1, $3, 'outbound', 'completed', 'neutral', 'completed', '+14155550100', '{}'::jsonb,
            4, t - interval '1 minute', t, t - interval '1 minute', t - interval '50 seconds', t, 50 + i % 200, 0, ((50 + i % 200) * 200003 + 59) / 60
       FROM generate_series(1, $4::int) AS i,
            LATERAL (SELECT now() - make_interval(days => $5) + (i * ($5 * 86400.0 / $4)) * interval '1 second' AS t) AS times`,
    [resellerId, tenantId, agentId, CALL_ROWS, HISTORY_DAYS],
  );
  await client.query(
    `UPDATE organizations SET balance_micros = balance_micros + (SELECT sum(amount_micros) FROM ledger_entries WHERE org_id = $1 AND id LIKE 'led_bench%')
      WHERE id = $1`,
    [resellerId],
  );
  await client.query('COMMIT');
  // What autovacuum does soon after a bulk load; measuring before it would measure its work too.
  await client.query('VACUUM (ANALYZE) ledger_entries, calls, messages');
}

async function main(): Promise<void> {
  const databaseUrl = await benchDatabase(DATABASE, { fresh: true });
  const env = {
    DATABASE_URL: databaseUrl,
    PORT: String(PORT),
    OPERATOR_TOKEN,
    LOG_LEVEL: 'warn',
    REDIS_PREFIX: 'ringlane_bench_usage',
    NODE_ENV: 'production',
  };
  const api = await startServer('dist/src/server.js', env, `${BASE}/readyz`);
  const http = apiClient(BASE, 1);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const dataSource = createDataSource(databaseUrl);
  await dataSource.initialize();
  const usageRollup = new UsageRollup(new UsageRepository(dataSource));
  try {
    const call = http.request;
    const { org: reseller, api_key } = await call<CreatedOrg>('POST', '/admin/v1/orgs', OPERATOR_TOKEN, {
      name: 'Bench reseller',
      reseller: true,
      balance: '1000000',
      rates: { per_minute: '0.12', per_text: '0.05' },
    });
    const key = api_key.key;
    const tenant = await call<{ id: string }>('POST', '/v1/tenants', key, { name: 'Bench tenant', timezone: 'UTC', industry: 'dental' });
    const { rows: agents } = await client.query<{ id: string }>('SELECT id FROM agents WHERE org_id = $1 LIMIT 1', [tenant.id]);

    let started = Date.now();
    await seed(client, reseller.id, tenant.id, agents[0].id);
    const seedSeconds = (Date.now() - started) / 1000;

    started = Date.now();
    const rollup = await usageRollup.run(new Date());
    const rollupSeconds = (Date.now() - started) / 1000;
    const { rows: buckets } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_buckets WHERE org_id = $1', [tenant.id]);
    await client.query('VACUUM (ANALYZE) usage_buckets');
    started = Date.now();
    await usageRollup.run(new Date());
    const steadySeconds = (Date.now() - started) / 1000;

    const until = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const since = new Date(until.getTime() - 366 * 86_400_000);
    const paths = {
      year: `/v1/tenants/${tenant.id}/usage?since=${since.toISOString()}&until=${until.toISOString()}`,
      month: `/v1/tenants/${tenant.id}/usage`,
      plain: `/v1/tenants/${tenant.id}`,
    };

    // The answer must match the ledger (charges) and the calls and texts (billable) to the micro.
    const year = await call<{ currency: string; charges: { total: string }; billable: { total: string } }>('GET', paths.year, key);
    const { rows: truth } = await client.query<{ total: string; billable: string }>(
      `SELECT (-sum(amount_micros))::text AS total,
              ((SELECT sum(billable_micros) FROM calls WHERE org_id = $1 AND ended_at >= $2 AND ended_at < $3)
               + (SELECT sum(billable_micros) FROM messages WHERE org_id = $1 AND created_at >= $2 AND created_at < $3))::text AS billable
         FROM ledger_entries WHERE subject_org_id = $1 AND kind <> 'adjustment' AND created_at >= $2 AND created_at < $3`,
      [tenant.id, since, until],
    );
    const { rows: bucketRows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM usage_buckets WHERE org_id = $1 AND hour >= $2 AND hour < $3',
      [tenant.id, since, until],
    );

    for (let i = 0; i < 50; i++) for (const path of Object.values(paths)) await call('GET', path, key); // warm-up
    const times: Record<keyof typeof paths, number[]> = { year: [], month: [], plain: [] };
    for (let i = 0; i < REQUESTS; i++) {
      for (const name of Object.keys(paths) as Array<keyof typeof paths>) {
        const t0 = performance.now();
        await call('GET', paths[name], key);
        times[name].push(performance.now() - t0);
      }
    }
    const stats = (name: keyof typeof paths) => {
      const sorted = [...times[name]].sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    };
    const row = (label: string, s: { p50: number; p99: number }) =>
      `${label.padEnd(44)} p50 ${s.p50.toFixed(2).padStart(6)} ms   p99 ${s.p99.toFixed(2).padStart(6)} ms`;
    const y = stats('year');
    const m = stats('month');
    const p = stats('plain');
    console.log(
      `bench:usage — one tenant: ${LEDGER_ROWS.toLocaleString('en')} ledger entries (texts with their messages) and ${CALL_ROWS.toLocaleString('en')} completed calls over ${HISTORY_DAYS} days (seeded in ${seedSeconds.toFixed(1)} s)`,
    );
    console.log(
      `first rollup:  ${rollupSeconds.toFixed(2)} s, ${rollup.chunks} chunk statements, ${buckets[0].n} buckets for the tenant; next run (steady state): ${(steadySeconds * 1000).toFixed(0)} ms`,
    );
    const same = (answer: string, expected: string) =>
      `${answer} ${year.currency}, the source rows say ${formatMoney(BigInt(expected))}: ${answer === formatMoney(BigInt(expected)) ? 'equal' : 'DIFFERENT'}`;
    console.log(
      `366-day window reads ${bucketRows[0].n} bucket rows; charges total ${same(year.charges.total, truth[0].total)}; billable total ${same(year.billable.total, truth[0].billable)}`,
    );
    console.log(`${REQUESTS} sequential requests each, interleaved, one keep-alive connection:`);
    console.log(row('GET /v1/tenants/{id}/usage (366-day window)', y));
    console.log(row('GET /v1/tenants/{id}/usage (default: month)', m));
    console.log(row('GET /v1/tenants/{id}', p));
    console.log(`ratio 366-day p50 / plain p50: ${(y.p50 / p.p50).toFixed(2)}   (target ≤ 3)`);
  } finally {
    await dataSource.destroy();
    await client.end();
    await http.close();
    await stopServer(api);
  }
}

runBench(main);
