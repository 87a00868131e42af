// Ringlane behind a real PgBouncer in transaction pooling (docs/scaling.md "PgBouncer"), in every
// pass: a PgBouncer of this file's own with two server connections, DATABASE_URL through it and
// DATABASE_DIRECT_URL at Postgres itself, as a deployment behind a transaction pooler is set up.
import { expect } from 'chai';
import pg from 'pg';
import { config } from '../../src/config.js';
import { migrations } from '../../src/migrations/index.js';
import { asCaller, expectStatus } from '../helpers/api.js';
import { db } from '../helpers/db.js';
import { PrivatePgBouncer } from '../helpers/pgbouncer.js';
import { exitCodeOf, freePort, ServiceProcesses, startProcess, type Service } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { placeCallThrough, voiceOrg, waitForCalls } from '../helpers/voice.js';

/** Server connections: far fewer than the processes' clients, so statements of different clients share each one. */
const SERVER_CONNECTIONS = 2;
const direct = new URL(config.databaseDirectUrl);
const database = direct.pathname.slice(1);

/** A process's name in pg_stat_activity and in PgBouncer's SHOW CLIENTS (src/lib/db.ts applicationName). */
const nameOf = (service: Service, entry: string) => `ringlane ${entry} ${service.child.pid}`;

describe('through PgBouncer in transaction pooling (DATABASE_URL pooled, DATABASE_DIRECT_URL direct)', function () {
  this.timeout(120_000);
  let bouncer: PrivatePgBouncer;
  const services = new ServiceProcesses();
  let receiver: Receiver | undefined;

  before(async () => {
    bouncer = await PrivatePgBouncer.start({ server: { host: direct.hostname, port: Number(direct.port || 5432) }, poolSize: SERVER_CONNECTIONS });
  });
  after(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await receiver?.close();
    await bouncer?.stop();
  });

  it('release migrates a new database over DATABASE_DIRECT_URL alone: DATABASE_URL may point nowhere', async () => {
    const fresh = new URL(config.databaseDirectUrl);
    fresh.pathname = `${fresh.pathname}_pgbouncer`;
    const nowhere = new URL(bouncer.through(fresh.toString()));
    nowhere.port = String(await freePort());
    const release = startProcess('scripts/migrate.ts', { DATABASE_URL: nowhere.toString(), DATABASE_DIRECT_URL: fresh.toString(), LOG_LEVEL: 'info' });
    const printed: string[] = [];
    release.stdout!.on('data', (d: Buffer) => printed.push(d.toString()));
    release.stderr!.on('data', (d: Buffer) => printed.push(d.toString()));
    try {
      expect(await exitCodeOf(release), printed.join('')).to.equal(0);
      const client = new pg.Client({ connectionString: fresh.toString() });
      await client.connect();
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM migrations');
      await client.end();
      expect(rows[0].n).to.equal(migrations.length);
    } finally {
      const admin = new pg.Client({ connectionString: config.databaseDirectUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(fresh.pathname.slice(1))} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('the Procfile through it: calls placed and listed over the API, every event delivered; the LISTEN sessions and the delivery path bypass it', async () => {
    receiver = await startReceiver();
    const env = { DATABASE_URL: bouncer.through(config.databaseDirectUrl), DATABASE_DIRECT_URL: config.databaseDirectUrl };
    const port = await freePort();
    const [web, calls, relay, webhooks] = await Promise.all(
      (['web', 'calls', 'relay', 'webhooks'] as const).map((kind) => services.start(kind, { ...env, ...(kind === 'web' ? { PORT: String(port) } : {}) })),
    );

    const org = await voiceOrg();
    const api = asCaller(org.key, {}, `http://127.0.0.1:${port}`);
    expectStatus(await api.post('/v1/webhook-endpoints', { name: 'Hooks', url: receiver.url, secret: 'a-secret-value', outcomes: [] }), 201);
    // Placed at once: each placement's statements (named ones, were they named) run on whichever server connection is free.
    const ids = await Promise.all(Array.from({ length: 6 }, () => placeCallThrough(port, org, { duration_seconds: 30 })));
    await waitForCalls(org, ids);
    const listed = expectStatus(await api.get('/v1/calls?limit=100'), 200).body.data.map((c: { id: string }) => c.id);
    expect([...listed].sort()).to.deep.equal([...ids].sort());
    const all = ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'];
    await receiver.until((got) => got.length >= ids.length * all.length, 30_000);
    for (const id of ids) {
      const events = receiver.received.filter((r) => r.body.call_id === id).map((r) => r.body.event);
      expect(events.sort(), id).to.deep.equal([...all].sort());
    }

    // Every process's pool went through PgBouncer, many clients over its few server connections.
    const clients = (await bouncer.show('CLIENTS', database)).map((c) => c.application_name);
    const names = [nameOf(web, 'server'), nameOf(calls, 'calls'), nameOf(relay, 'relay'), nameOf(webhooks, 'webhooks')];
    for (const name of names) expect(clients, services.tails()).to.include(name);
    const servers = await bouncer.show('SERVERS', database);
    expect(servers.length).to.be.within(1, SERVER_CONNECTIONS);
    expect(clients.length).to.be.above(servers.length);
    // The LISTEN sessions (relay: call_events; webhooks: webhook_deliveries) are direct: none of them is one of PgBouncer's.
    const bouncerPorts = servers.map((s) => Number(s.local_port));
    const listening: Array<{ name: string; port: number }> = await db.query(
      `SELECT application_name AS name, client_port AS port FROM pg_stat_activity
        WHERE datname = $1 AND application_name = ANY($2) AND query LIKE 'LISTEN %' AND state = 'idle'`,
      [database, names],
    );
    expect(listening.map((l) => l.name).sort()).to.deep.equal([nameOf(relay, 'relay'), nameOf(webhooks, 'webhooks')].sort());
    expect(listening.filter((l) => bouncerPorts.includes(l.port))).to.deep.equal([]);
  });
});
