// npm run bench:history — the history tables partitioned by day against the same unpartitioned, on two
// databases of their own: write path (insert, fan out, claim, record) and purge of a month past retention
// (DELETE + VACUUM against dropping partitions). See docs/operations.md#benchmarks.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { config } from '../../src/config.js';
import { HistoryMaintenance, retainedHistory } from '../../src/history/history-partitions.js';
import { HistoryRepository } from '../../src/history/history.repository.js';
import { createDataSource, createPool } from '../../src/lib/db.js';
import { createRelay } from '../../src/runtime.js';
import { RECORD_BATCH } from '../../src/webhooks/attempt-recorder.js';
import type { Relay } from '../../src/webhooks/relay.js';
import { AttemptsRepository, type RecordedAttempt } from '../../src/webhooks/attempts.repository.js';
import { DeliveryClaimsRepository } from '../../src/webhooks/delivery-claims.repository.js';
import { benchDatabase, benchPool, CpuSampler, runBench } from './harness.js';

const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const EVENTS_PER_DAY = Number(process.env.BENCH_EVENTS_PER_DAY ?? 20_000);
const RECENT_DAYS = Number(process.env.BENCH_RECENT_DAYS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const ROUND_EVENTS = 1_000;
const ORGS = 100;
const DAY_MS = 86_400_000;

interface Side {
  name: string;
  partitioned: boolean;
  client: pg.Client;
  dataSource: DataSource;
  pool: pg.Pool;
  relay: Relay;
  claims: DeliveryClaimsRepository;
  attempts: AttemptsRepository;
  history: HistoryMaintenance;
  sampler: CpuSampler;
  monitor: pg.Pool;
}

/** The baseline: unpartitioned tables with the same columns, keys, indexes, cascading foreign keys and NOTIFY trigger. */
async function unpartition(client: pg.Client): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'call_events']) {
    await client.query(`CREATE TABLE ${table}_plain (LIKE ${table} INCLUDING ALL)`);
    await client.query(`DROP TABLE ${table}`);
    await client.query(`ALTER TABLE ${table}_plain RENAME TO ${table}`);
  }
  await client.query(`ALTER TABLE webhook_deliveries ADD FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE`);
  await client.query(
    `ALTER TABLE webhook_attempts ADD FOREIGN KEY (delivery_id, delivery_created_at) REFERENCES webhook_deliveries(id, created_at) ON DELETE CASCADE`,
  );
  await client.query(`CREATE TRIGGER call_events_notify AFTER INSERT ON call_events FOR EACH STATEMENT EXECUTE FUNCTION call_events_notify()`);
}

/** `n` events from `from`, `stepMs` apart, round robin over orgs; `relayed` ones with a delivery and one attempt. */
async function insertHistory(client: pg.Client, tag: string, from: Date, n: number, stepMs: number, relayed: boolean): Promise<void> {
  const events = `INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, created_at, relayed_at)
    SELECT 'evt_' || $1 || '_' || i, 'call_' || $1 || '_' || i, 'org_bench' || (i % ${ORGS}), 'org_bench' || (i % ${ORGS}), 4, 'call.completed',
           jsonb_build_object('event', 'call.completed', 'call_id', 'call_' || $1 || '_' || i, 'org_id', 'org_bench' || (i % ${ORGS}), 'status', 'completed',
                              'sequence', 4, 'occurred_at', iso_utc(t), 'phone_number', '+14155550100', 'direction', 'outbound', 'outcome', 'positive',
                              'end_reason', 'completed', 'duration_seconds', 60, 'started_at', iso_utc(t), 'ended_at', iso_utc(t), 'agent_id', 'agt_bench',
                              'contact_id', 'con_bench', 'campaign_id', null),
           t, t, CASE WHEN $4 THEN t END
      FROM generate_series(0, $3::int - 1) AS i, LATERAL (SELECT $2::timestamptz + i * $5 * interval '1 millisecond' AS t) AS times
    RETURNING id, org_id, call_id, created_at`;
  if (!relayed) {
    await client.query(events, [tag, from, n, false, stepMs]);
    return;
  }
  await client.query(
    `WITH ev AS (${events}),
          dl AS (INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, last_response_status, created_at)
                 SELECT 'dlv_' || ev.id, ev.org_id, 'whe_' || ev.org_id, ev.id, ev.call_id, 'call.completed', 4, 'succeeded', 1, 200, ev.created_at FROM ev
                 RETURNING id, created_at)
     INSERT INTO webhook_attempts (id, delivery_id, delivery_created_at, attempted_at, response_status, duration_ms)
     SELECT gen_random_uuid(), dl.id, dl.created_at, dl.created_at + interval '1 second', 200, 40 FROM dl`,
    [tag, from, n, true, stepMs],
  );
}

async function open(name: string, partitioned: boolean): Promise<Side> {
  const url = await benchDatabase(name, { fresh: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  if (!partitioned) await unpartition(client);
  await client.query(`INSERT INTO organizations (id, name) SELECT 'org_bench' || i, 'Bench ' || i FROM generate_series(0, ${ORGS - 1}) AS i`);
  await client.query(
    `INSERT INTO webhook_endpoints (id, org_id, name, url, secret) SELECT 'whe_org_bench' || i, 'org_bench' || i, 'E', 'http://127.0.0.1:9/', 'a-bench-secret' FROM generate_series(0, ${ORGS - 1}) AS i`,
  );
  const dataSource = await createDataSource(url).initialize();
  const pool = createPool(2, url);
  const monitor = benchPool(url);
  const sampler = new CpuSampler(async () => {
    const { rows } = await monitor.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> 'ringlane-bench'`,
      [name],
    );
    return rows.map((r) => ({ pid: r.pid, label: name }));
  });
  return {
    name,
    partitioned,
    client,
    dataSource,
    pool,
    relay: createRelay(dataSource),
    claims: new DeliveryClaimsRepository(pool),
    attempts: new AttemptsRepository(pool),
    history: new HistoryMaintenance(new HistoryRepository(dataSource)),
    sampler,
    monitor,
  };
}

async function fill(side: Side): Promise<number> {
  const started = performance.now();
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const oldest = today - (config.webhook.retentionDays + DAYS) * DAY_MS;
  if (side.partitioned) {
    // The days' partitions, as the maintenance worker made them while those days were recent.
    await side.client.query(
      `SELECT history_partitions_create(t, $1::date, $2::date) FROM unnest(ARRAY['call_events', 'webhook_deliveries', 'webhook_attempts']) AS t`,
      [new Date(oldest).toISOString().slice(0, 10), new Date(today).toISOString().slice(0, 10)],
    );
  }
  const step = DAY_MS / EVENTS_PER_DAY;
  for (let d = 0; d < DAYS; d++) await insertHistory(side.client, `old${d}`, new Date(oldest + d * DAY_MS), EVENTS_PER_DAY, step, true);
  for (let d = RECENT_DAYS; d >= 1; d--) await insertHistory(side.client, `new${d}`, new Date(Date.now() - d * DAY_MS), EVENTS_PER_DAY, step / 2, true);
  // What autovacuum does soon after a bulk load; measuring before it would measure its work too.
  await side.client.query('VACUUM (ANALYZE) call_events, webhook_deliveries, webhook_attempts');
  return (performance.now() - started) / 1000;
}

const STAGES = ['events', 'fan-out', 'claim + record'] as const;
type Stage = (typeof STAGES)[number];
type Cost = Record<Stage, { wallMs: number; cpuMs: number }>;

async function stage(side: Side, cost: Cost, name: Stage, work: () => Promise<void>): Promise<void> {
  await side.sampler.start();
  const started = performance.now();
  await work();
  cost[name].wallMs += performance.now() - started;
  const { byLabel } = await side.sampler.stop();
  cost[name].cpuMs += byLabel.get(side.name)?.ms ?? 0;
}

async function writeRound(side: Side, round: number, cost: Cost): Promise<void> {
  await stage(side, cost, 'events', () => insertHistory(side.client, `w${round}`, new Date(), ROUND_EVENTS, 0, false));
  await stage(side, cost, 'fan-out', async () => {
    while ((await side.relay.batch()) > 0);
  });
  await stage(side, cost, 'claim + record', async () => {
    const open = await side.claims.openRange(retainedHistory('webhook_deliveries'));
    const wanted = Array.from({ length: ORGS }, (_, i) => ({ endpointId: `whe_org_bench${i}`, quota: 20 }));
    for (;;) {
      const targets = await side.claims.claimDue(wanted, 60, open);
      if (targets.length === 0) break;
      // Recorded in batches as the dispatcher records them.
      for (let i = 0; i < targets.length; i += RECORD_BATCH) {
        const attempts: RecordedAttempt[] = targets.slice(i, i + RECORD_BATCH).map((t) => ({
          deliveryId: t.delivery_id,
          deliveryCreatedAt: t.created_at,
          endpointId: t.endpoint_id,
          attemptId: randomUUID(),
          attemptedAt: new Date(),
          responseStatus: 200,
          durationMs: 40,
          error: null,
          responseBody: null,
          status: 'succeeded',
          nextAttemptAt: null,
          endpointGone: false,
        }));
        await side.attempts.record(attempts, 120);
      }
    }
  });
}

async function purge(side: Side): Promise<{ wallMs: number; cpuMs: number; vacuumMs: number }> {
  await side.sampler.start();
  const started = performance.now();
  if (side.partitioned) {
    await side.history.maintain();
  } else {
    // The former hourly purge (attempts by cascade), and the same for events.
    await side.client.query(`DELETE FROM webhook_deliveries WHERE created_at < now() - make_interval(days => $1)`, [config.webhook.retentionDays]);
    await side.client.query(`DELETE FROM call_events WHERE created_at < now() - make_interval(days => $1)`, [config.webhook.retentionDays]);
  }
  const wallMs = performance.now() - started;
  const { byLabel } = await side.sampler.stop();
  // A DELETE leaves its dead rows for VACUUM; dropped partitions leave nothing.
  const vacuumStarted = performance.now();
  if (!side.partitioned) await side.client.query('VACUUM call_events, webhook_deliveries, webhook_attempts');
  return { wallMs, cpuMs: byLabel.get(side.name)?.ms ?? 0, vacuumMs: performance.now() - vacuumStarted };
}

const counts = async (side: Side) =>
  (
    await side.client.query<{ events: number; deliveries: number; attempts: number }>(
      `SELECT (SELECT count(*) FROM call_events)::int AS events, (SELECT count(*) FROM webhook_deliveries)::int AS deliveries, (SELECT count(*) FROM webhook_attempts)::int AS attempts`,
    )
  ).rows[0];

async function main(): Promise<void> {
  const plain = await open('ringlane_bench_history_plain', false);
  const parted = await open('ringlane_bench_history', true);
  try {
    const filled = { plain: await fill(plain), parted: await fill(parted) };
    const before = await counts(parted);
    console.log(
      `bench:history — ${DAYS} days × ${EVENTS_PER_DAY.toLocaleString('en')} events past retention (${config.webhook.retentionDays} days), + ${RECENT_DAYS} recent days; each event with one delivery and one attempt`,
    );
    console.log(
      `filled: ${before.events.toLocaleString('en')} events, ${before.deliveries.toLocaleString('en')} deliveries, ${before.attempts.toLocaleString('en')} attempts per database (unpartitioned ${filled.plain.toFixed(1)} s, partitioned ${filled.parted.toFixed(1)} s)`,
    );

    const zero = (): Cost => Object.fromEntries(STAGES.map((s) => [s, { wallMs: 0, cpuMs: 0 }])) as Cost;
    const cost = { plain: zero(), parted: zero() };
    await writeRound(plain, -1, zero()); // warm-up: plans, caches, the relay's range
    await writeRound(parted, -1, zero());
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating which goes first, so neither always runs on a warmer machine.
      const order =
        round % 2 === 0
          ? ([
              ['plain', plain],
              ['parted', parted],
            ] as const)
          : ([
              ['parted', parted],
              ['plain', plain],
            ] as const);
      for (const [key, side] of order) await writeRound(side, round, cost[key]);
    }
    const per = (ms: number) => (ms / ROUNDS).toFixed(1).padStart(7);
    console.log(`\nwrite path, per ${ROUND_EVENTS.toLocaleString('en')} events (${ROUNDS} rounds each, alternating): wall ms and Postgres backend CPU ms`);
    console.log(`${'stage'.padEnd(16)} ${'unpartitioned'.padStart(22)} ${'partitioned'.padStart(22)}   ratio (CPU)`);
    const total = (c: Cost, k: 'wallMs' | 'cpuMs') => STAGES.reduce((sum, s) => sum + c[s][k], 0);
    for (const s of STAGES) {
      const a = cost.plain[s];
      const b = cost.parted[s];
      console.log(`${s.padEnd(16)} ${per(a.wallMs)} wall ${per(a.cpuMs)} cpu ${per(b.wallMs)} wall ${per(b.cpuMs)} cpu   ${(b.cpuMs / a.cpuMs).toFixed(2)}`);
    }
    const [pw, pc, qw, qc] = [total(cost.plain, 'wallMs'), total(cost.plain, 'cpuMs'), total(cost.parted, 'wallMs'), total(cost.parted, 'cpuMs')];
    console.log(`${'all'.padEnd(16)} ${per(pw)} wall ${per(pc)} cpu ${per(qw)} wall ${per(qc)} cpu   ${(qc / pc).toFixed(2)} (wall ${(qw / pw).toFixed(2)})`);

    const deleted = await purge(plain);
    const dropped = await purge(parted);
    const [left, leftParted] = [await counts(plain), await counts(parted)];
    console.log(`\npurge of the month past retention (${(DAYS * EVENTS_PER_DAY).toLocaleString('en')} events, deliveries and attempts each):`);
    console.log(
      `DELETE (unpartitioned):     ${deleted.wallMs.toFixed(0).padStart(7)} ms wall ${deleted.cpuMs.toFixed(0).padStart(7)} ms backend CPU, then VACUUM ${deleted.vacuumMs.toFixed(0)} ms`,
    );
    console.log(`drop partitions (by day):   ${dropped.wallMs.toFixed(0).padStart(7)} ms wall ${dropped.cpuMs.toFixed(0).padStart(7)} ms backend CPU`);
    console.log(
      `ratio DELETE / drop: ${(deleted.wallMs / dropped.wallMs).toFixed(0)}× wall (${((deleted.wallMs + deleted.vacuumMs) / dropped.wallMs).toFixed(0)}× with the VACUUM)`,
    );
    console.log(
      `left: unpartitioned ${JSON.stringify(left)}, partitioned ${JSON.stringify(leftParted)}${JSON.stringify(left) === JSON.stringify(leftParted) ? ' (equal)' : ' (DIFFERENT)'}`,
    );
  } finally {
    for (const side of [plain, parted]) {
      await side.dataSource.destroy();
      await side.pool.end();
      await side.monitor.end();
      await side.client.end();
    }
  }
}

runBench(main);
