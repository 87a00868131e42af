// Redis restarted empty under running processes: calls in progress must still end (the sweep's
// scheduler and the reports it re-drives live in Redis). Every worker kind runs against a
// redis-server of the test's own, SIGKILLed and started again empty.
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { config } from '../../src/config.js';
import { db } from '../helpers/db.js';
import { QUEUES } from '../../src/jobs.js';
import { queuePrefix } from '../../src/lib/queues.js';
import { createRedis, waitForRedis } from '../../src/lib/redis.js';
import { freePort, ServiceProcesses, waitUntil, type ServiceKind } from '../helpers/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server.js';
import { SCHEDULERS, schedulersIn } from '../helpers/schedulers.js';
import { placeCallThrough, voiceOrg } from '../helpers/voice.js';

const CALLS = 60;

describe('Redis restarted empty under every worker kind', function () {
  this.timeout(120_000);
  const services = new ServiceProcesses();
  let redis: PrivateRedis;

  after(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await redis?.stop();
  });

  it(`${CALLS} calls in progress when Redis dies all end completed, charged once, with one call.completed each, with no request afterwards; every job scheduler is back; no error is logged`, async () => {
    // Every queue that has a worker kind is checked (a new queue needs its line above).
    expect(Object.keys(SCHEDULERS).sort()).to.deep.equal(Object.keys(QUEUES).sort());
    redis = await startPrivateRedis();
    const port = await freePort();
    const env = redis.env;
    const kinds: ServiceKind[] = ['web', 'maintenance', 'calls', 'tenants', 'usage', 'webhooks'];
    await Promise.all(kinds.map((kind) => services.start(kind, kind === 'web' ? { ...env, PORT: String(port) } : env)));
    const org = await voiceOrg({ fields: { ceiling: { max_concurrent_calls: CALLS, max_calls_per_hour: 1000 } } });

    // Through the web process, so the calls' Redis state lives in the Redis that will die.
    const ids: string[] = [];
    // 5,000 simulated seconds are 10 s here (SIM_SECOND_MS=2): in progress when Redis dies.
    for (let i = 0; i < CALLS; i++) ids.push(await placeCallThrough(port, org, { duration_seconds: 5000 }));
    const statuses = async () =>
      Object.fromEntries(
        (await db.query('SELECT status, count(*)::int AS n FROM calls WHERE id = ANY($1) GROUP BY status', [ids])).map((r: { status: string; n: number }) => [
          r.status,
          r.n,
        ]),
      );
    await waitUntil(
      `all ${CALLS} calls in progress`,
      async () => (await statuses()).in_progress === CALLS,
      30_000,
      async () => `${JSON.stringify(await statuses())}\n${services.tails()}`,
    );

    await redis.kill();
    expect(await statuses(), 'the calls were still in progress when Redis died').to.deep.equal({ in_progress: CALLS });
    await redis.restart();

    // No request from here on: the workers alone must notice and finish the calls.
    await waitUntil(
      `all ${CALLS} calls completed`,
      async () => (await statuses()).completed === CALLS,
      60_000,
      async () => `${JSON.stringify(await statuses())}\n${services.tails()}`,
      250,
    );
    const [once] = await db.query(
      `SELECT count(*) FILTER (WHERE charges = 1)::int AS charged_once, count(*) FILTER (WHERE completions = 1)::int AS completed_once
         FROM (SELECT c.id,
                      (SELECT count(*) FROM ledger_entries l WHERE l.reference = 'call:' || c.id) AS charges,
                      (SELECT count(*) FROM call_events e WHERE e.call_id = c.id AND e.event = 'call.completed') AS completions
                 FROM calls c WHERE c.id = ANY($1)) per_call`,
      [ids],
    );
    expect(once).to.deep.equal({ charged_once: CALLS, completed_once: CALLS });
    // The outage is logged as warnings (a connection lost), never as errors with their stacks: on a
    // cluster, commands sent while it is down fail (CLUSTERDOWN), and BullMQ passes those on. A
    // cluster client stays ready through it, so there the warning comes from the masters' connections.
    for (const service of services.running) {
      const lines = service.log.join('').split('\n');
      expect(
        lines.filter((line) => /"level":[56]0/.test(line)),
        service.kind,
      ).to.deep.equal([]);
      if (config.redis.mode === 'cluster')
        expect(
          lines.some((line) => line.includes('Redis unavailable; reconnecting')),
          service.kind,
        ).to.equal(true);
    }

    const present = () => schedulersIn(redis.target);
    await waitUntil(
      'every worker kind upserted its schedulers again',
      async () => JSON.stringify(await present()) === JSON.stringify(SCHEDULERS),
      20_000,
      present,
    );
  });
});

describe('a worker owns its queue’s job schedulers', function () {
  this.timeout(60_000);
  const services = new ServiceProcesses();
  after(() => services.stopAll());

  it('removes the schedulers its queue no longer declares (left by earlier versions)', async () => {
    const redis = createRedis('command');
    await waitForRedis(redis, 5000);
    const queue = new Queue('webhooks', { connection: redis, prefix: queuePrefix('webhooks') });
    try {
      // Earlier webhooks workers swept every 10 s and purged hourly; this one does neither.
      await queue.upsertJobScheduler('sweep', { every: 10_000 }, { name: 'sweep' });
      await queue.upsertJobScheduler('purge', { every: 3_600_000 }, { name: 'purge' });
      await services.start('webhooks');
      const keys = async () => (await queue.getJobSchedulers()).map((s) => s.key).sort();
      await waitUntil('only the declared schedulers remain', async () => JSON.stringify(await keys()) === JSON.stringify(SCHEDULERS.webhooks), 20_000, keys);
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });
});
