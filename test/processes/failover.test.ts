// A failover of Postgres under load, as Patroni, RDS Multi-AZ or Heroku Postgres HA do one: the
// primary dies (kill -9 of the postmaster and every backend), its synchronous standby is promoted
// and takes over the primary's address (here a TCP proxy the processes connect to, pointed at
// the new primary). Real processes of every Procfile kind run through it without a restart; what
// must hold afterwards is what a client and their accountant would check.
import { once } from 'node:events';
import net from 'node:net';
import { expect } from 'chai';
import { TERMINAL_STATUSES } from '../../src/calls/call.entity.js';
import { ensureDatabase, runMigrations } from '../../src/migrations/migrate.js';
import { asCaller, expectStatus } from '../helpers/api.js';
import { PgServer } from '../helpers/pg-server.js';
import { freePort, isAlive, SERVICES, ServiceProcesses, waitUntil, type ServiceKind } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server.js';
import { expectChargedOnce, voiceOrg, type Query } from '../helpers/voice.js';

const DATABASE = 'ringlane_failover';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The primary's address: a TCP proxy on a fixed port forwarding every connection to the current
 * primary. Pointed nowhere, it closes new connections at once, as an address nobody serves.
 */
class PrimaryAddress {
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
    private target: number | null,
  ) {
    server.on('connection', (client) => this.forward(client));
  }

  static async start(target: number): Promise<PrimaryAddress> {
    const port = await freePort();
    const server = net.createServer();
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return new PrimaryAddress(server, port, target);
  }

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Where new connections go from now on (null: nowhere). */
  pointAt(target: number | null): void {
    this.target = target;
  }

  /** Closes every connection made through it. */
  drop(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(client: net.Socket): void {
    if (this.target === null) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ]) {
      this.sockets.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        this.sockets.delete(socket);
        other.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/**
 * Clients placing calls through POST /v1/calls until stopped, each call a few simulated seconds;
 * what every request answered, with when it started and ended.
 */
class CallLoad {
  readonly acknowledged: Array<{ id: string; started: number; at: number }> = [];
  readonly failed: Array<{ status: number | string; at: number }> = [];
  private running = true;
  private readonly clients: Array<Promise<void>>;

  constructor(
    private readonly baseUrl: string,
    private readonly org: { key: string; agentId: string; contactIds: string[] },
    clients: number,
  ) {
    this.clients = Array.from({ length: clients }, () => this.client());
  }

  /** Successes whose request started at or after `from`. */
  acknowledgedSince(from: number) {
    return this.acknowledged.filter((a) => a.started >= from);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }

  private async client(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      try {
        const res = await fetch(`${this.baseUrl}/v1/calls`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.org.key}`, 'content-type': 'application/json' },
          // 1 to 1500 simulated seconds: up to 3 s of real time (SIM_SECOND_MS=2), so calls are
          // ringing and in progress when the primary dies.
          body: JSON.stringify({
            agent_id: this.org.agentId,
            contact_id: this.org.contactIds[0],
            simulate: { duration_seconds: 1 + Math.floor(Math.random() * 1500) },
          }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = await res.json();
        if (res.status === 201) this.acknowledged.push({ id: body.id, started, at: Date.now() });
        else this.failed.push({ status: res.status, at: Date.now() });
      } catch (err) {
        this.failed.push({ status: (err as Error).name, at: Date.now() });
      }
      await sleep(50);
    }
  }
}

describe('a failover of Postgres under load: the primary killed (kill -9), its synchronous standby promoted at the same address', function () {
  this.timeout(300_000);
  const services = new ServiceProcesses();
  const servers: PgServer[] = [];
  let address: PrimaryAddress | undefined;
  let redis: PrivateRedis | undefined;
  let receiver: Receiver | undefined;

  afterEach(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await address?.close();
    await receiver?.close();
    await redis?.stop();
    [address, receiver, redis] = [undefined, undefined, undefined];
    await Promise.all(servers.splice(0).map((s) => s.remove()));
  });

  /**
   * Every process kind under load through the primary's address; the primary killed, the address
   * pointing nowhere for `outageMs`, then at the promoted standby. Checks what must hold after it.
   */
  async function failover(outageMs: number): Promise<void> {
    const primary = await PgServer.primary({ settings: `synchronous_standby_names = 'standby'\nsynchronous_commit = on` });
    servers.push(primary);
    const standby = await primary.standby('standby');
    servers.push(standby);
    await waitUntil(
      'the standby streams synchronously',
      async () => (await primary.query(`SELECT 1 FROM pg_stat_replication WHERE application_name = 'standby' AND sync_state = 'sync'`)).length === 1,
      30_000,
      () => primary.log(),
    );
    address = await PrimaryAddress.start(primary.port);
    const url = address.url(DATABASE);
    await ensureDatabase(url);
    await runMigrations(url);
    let current = primary;
    const query: Query = (sql, values) => current.query(sql, values, DATABASE);

    receiver = await startReceiver();
    redis = await startPrivateRedis();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    // No pooler in front of these servers (the PgBouncer pass's direct URL is another server's).
    const env = { ...redis.env, DATABASE_URL: url, DATABASE_DIRECT_URL: '', DATABASE_POOL_SIZE: '10' };
    const kinds = Object.keys(SERVICES) as ServiceKind[];
    // One at a time: on a busy machine, seven starting at once take longer than a start may.
    for (const kind of kinds) await services.start(kind, { ...env, ...(kind === 'web' ? { PORT: String(port) } : {}) });
    const pids = services.running.map((s) => s.child.pid);

    // At most 20 calls at once: the load fills the slots, and calls wait for admission.
    const org = await voiceOrg({ baseUrl, fields: { balance: '100000.00', ceiling: { max_concurrent_calls: 20, max_calls_per_hour: 100_000 } } });
    expectStatus(
      await asCaller(org.key, {}, baseUrl).post('/v1/webhook-endpoints', { name: 'Failover', url: receiver.url, secret: 'a-secret-value', outcomes: [] }),
      201,
    );

    const load = new CallLoad(baseUrl, org, 3);
    let killedAt = 0;
    try {
      await waitUntil(
        'calls complete under load',
        async () => (await query(`SELECT 1 FROM calls WHERE org_id = $1 AND status = 'completed' LIMIT 20`, [org.id])).length === 20,
        30_000,
        () => services.tails(),
      );
      const before = load.acknowledged.length;

      // The failover: the primary dies with its connections, the standby is promoted and takes over the address.
      // From when the primary is surely dead (kill() resolves once its postmaster exited): a
      // request started earlier may have committed on it just before.
      await primary.kill();
      killedAt = Date.now();
      address.pointAt(null);
      address.drop();
      await sleep(outageMs);
      await standby.promote();
      const movedAt = Date.now();
      address.pointAt(standby.port);
      current = standby;

      await waitUntil(
        'POST /v1/calls succeeds again',
        async () => load.acknowledgedSince(killedAt).length > 0,
        60_000,
        () => ({ failed: load.failed.slice(-5), tails: services.tails() }),
      );
      const [first] = load.acknowledgedSince(killedAt).sort((a, b) => a.at - b.at);
      console.log(
        `      failover: ${first.at - killedAt} ms from the kill of the primary to the first POST /v1/calls answered 201 ` +
          `(${first.at - movedAt} ms after the promoted standby took the address; ${outageMs} ms without a primary); ` +
          `${before} calls acknowledged before, ${load.failed.filter((f) => f.at >= killedAt).length} requests failed meanwhile`,
      );
      // More calls afterwards, through the new primary.
      await waitUntil(
        'calls acknowledged after the failover',
        async () => load.acknowledgedSince(killedAt).length >= 30,
        60_000,
        () => services.tails(),
      );
    } finally {
      await load.stop();
    }
    expect(killedAt, 'the primary was killed').to.be.above(0);

    // Every call ends: the engine resumed (no call left queued for want of a slot, no report lost).
    const open = async () =>
      (
        await query(`SELECT count(*)::int AS n FROM calls WHERE org_id = $1 AND status NOT IN (${TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')})`, [org.id])
      )[0].n as number;
    const stateOf = async () =>
      `${JSON.stringify(await query(`SELECT status, count(*)::int AS n, count(dialed_at)::int AS dialed FROM calls WHERE org_id = $1 GROUP BY status`, [org.id]))}\n${services.tails()}`;
    await waitUntil('every call ended', async () => (await open()) === 0, 120_000, stateOf, 250);

    const calls: Array<{ id: string; status: string; charge: string }> = await query(
      `SELECT id, status, COALESCE(charge_micros, 0)::text AS charge FROM calls WHERE org_id = $1`,
      [org.id],
    );
    // Every call a client was told exists survived the failover.
    const stored = new Set(calls.map((c) => c.id));
    const lost = load.acknowledged.filter((a) => !stored.has(a.id));
    expect(lost, 'acknowledged calls missing after the failover').to.deep.equal([]);
    expect(
      calls.map((c) => c.status).filter((s) => s !== 'completed'),
      'every call answered and completed',
    ).to.deep.equal([]);
    await expectChargedOnce(query, calls);

    // Every event of every call reached the receiver at least once: the relay and the delivery path resumed.
    const events: Array<{ key: string }> = await query(`SELECT call_id || ':' || sequence AS key FROM call_events WHERE org_id = $1 AND call_id IS NOT NULL`, [
      org.id,
    ]);
    const received = () => new Set(receiver!.received.map((r) => `${r.body.call_id}:${r.body.sequence}`));
    const undelivered = () => events.map((e) => e.key).filter((key) => !received().has(key));
    await waitUntil(
      'every event delivered',
      async () => undelivered().length === 0,
      60_000,
      () => ({ undelivered: undelivered().slice(0, 10), tails: services.tails() }),
    );
    expect(events.length, 'four events per call').to.equal(4 * calls.length);

    // The same processes, never restarted, all still running.
    expect(
      services.running.filter((s) => !isAlive(s)).map((s) => s.kind),
      services.tails(),
    ).to.deep.equal([]);
    expect(services.running.map((s) => s.child.pid)).to.deep.equal(pids);
  }

  it('promoted at once: every process carries on without a restart; every acknowledged call exists, ended, charged once, each of its events delivered', () =>
    failover(0));

  it('promoted 20 s after the kill, longer than a job’s retries last (as a managed failover takes): the same', () => failover(20_000));
});
