// Every long-lived connection (the relay's LISTEN client too) survives its server going away.
// Real processes of every Procfile kind; every backend of the test database is terminated under
// them, twice.
import { expect } from 'chai';
import { config } from '../../src/config.js';
import { db } from '../helpers/db.js';
import { asCaller, expectStatus } from '../helpers/api.js';
import { freePort, isAlive, ServiceProcesses, SERVICES, waitUntil, type Service, type ServiceKind } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server.js';
import { placeCallThrough, voiceOrg, waitForCalls, type VoiceOrg } from '../helpers/voice.js';

/** How a process's connections are named in pg_stat_activity (src/lib/db.ts `applicationName`). */
const connectionName = (service: Service) => `ringlane ${SERVICES[service.kind].entry.replace(/^.*\/|\.ts$/g, '')} ${service.child.pid}`;

describe('Postgres connections terminated under every process kind (pg_terminate_backend)', function () {
  this.timeout(120_000);
  const services = new ServiceProcesses();
  let receiver: Receiver;
  let redis: PrivateRedis;

  after(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await receiver?.close();
    await redis?.stop();
  });

  it('every process survives, the relay LISTENs again, and calls placed afterwards complete with their events delivered', async () => {
    receiver = await startReceiver();
    const org: VoiceOrg = await voiceOrg();
    expectStatus(await asCaller(org.key).post('/v1/webhook-endpoints', { name: 'Faults', url: receiver.url, secret: 'a-secret-value', outcomes: [] }), 201);
    const port = await freePort();
    // A Redis of its own: the job schedulers this fleet creates must not change when other
    // tests' workers (sharing the run's key prefix) run their scheduled jobs.
    redis = await startPrivateRedis();
    const kinds = Object.keys(SERVICES) as ServiceKind[];
    const started = await Promise.all(kinds.map((kind) => services.start(kind, { ...redis.env, ...(kind === 'web' ? { PORT: String(port) } : {}) })));
    const service = (kind: ServiceKind) => started.find((s) => s.kind === kind)!;
    const describeAll = () => services.tails();

    /** Places calls through the web process, waits until they completed and their call.completed was delivered. */
    const callsGoThrough = async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await placeCallThrough(port, org, { duration_seconds: 1 }));
      const calls = await waitForCalls(org, ids, 30_000);
      expect(calls.map((c) => c.status)).to.deep.equal(Array(ids.length).fill('completed'));
      const delivered = () => new Set(receiver.received.filter((r) => r.body.event === 'call.completed').map((r) => r.body.call_id));
      await waitUntil('call.completed delivered for every call', async () => ids.every((id) => delivered().has(id)), 30_000, describeAll);
    };

    const listenBackends = async (): Promise<number[]> =>
      (
        await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND query LIKE 'LISTEN%'`, [
          connectionName(service('relay')),
        ])
      ).map((r: { pid: number }) => r.pid);

    await callsGoThrough();
    for (let round = 1; round <= 2; round++) {
      const [listening] = await listenBackends();
      expect(listening, 'the relay LISTENs').to.be.a('number');
      // Each termination waits (up to 10 s) until its backend has exited: without the wait, the
      // statement returns once the signals are sent, and this test's own next statement could
      // still reach a backend on its way out (behind PgBouncer, any of its server connections)
      // and fail with it (seen once in the PgBouncer pass).
      const terminated: Array<{ pid: number; application_name: string; ok: boolean }> = await db.query(
        `SELECT pid, application_name, pg_terminate_backend(pid, 10000) AS ok
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(terminated.find((b) => b.pid === listening)?.ok, 'the LISTEN connection was terminated').to.equal(true);
      // The processes that just worked had pooled connections, which were terminated too. Behind
      // PgBouncer (the PgBouncer pass) the pools' backends are PgBouncer's, each named after the
      // last client it served: only relay's and webhooks' direct ones (LISTEN, the delivery path) are theirs.
      const names = new Set(terminated.filter((b) => b.ok).map((b) => b.application_name));
      const owning = config.databasePooled ? (['relay', 'webhooks'] as const) : (['web', 'calls', 'relay', 'webhooks'] as const);
      for (const kind of owning) expect([...names], kind).to.include(connectionName(service(kind)));

      await waitUntil(
        `round ${round}: the relay LISTENs on a new connection`,
        async () => (await listenBackends()).some((pid) => pid !== listening),
        20_000,
        describeAll,
      );
      await callsGoThrough();
    }
    const exited = services.running.filter((s) => !isAlive(s));
    expect(
      exited.map((s) => s.kind),
      services.tails(),
    ).to.deep.equal([]);
  });
});
