// Reads from a streaming replica (docs/scaling.md#read-replica), with real servers: a primary
// this test makes, a hot standby of it (pg_basebackup, standby.signal), and web processes with
// DATABASE_REPLICA_URL. Replay on the standby is paused and resumed (pg_wal_replay_pause), and the
// standby is killed; what a client sees is asserted, never how long anything took.
import { expect } from 'chai';
import { ensureDatabase, runMigrations } from '../../src/migrations/migrate.js';
import { config } from '../../src/config.js';
import { asCaller, expectStatus, uniqueEmail, type Caller } from '../helpers/api.js';
import { PgServer } from '../helpers/pg-server.js';
import { eventually, freePort, ServiceProcesses } from '../helpers/processes.js';

interface Web {
  url: string;
  /** `checks.replica` of its /readyz (which answers 200 whatever the standby's state). */
  replica: () => Promise<string>;
}

describe('reads from a streaming replica (a real primary and hot standby, real web processes)', function () {
  this.timeout(180_000);
  const services = new ServiceProcesses();
  let primary: PgServer | undefined;
  let standby: PgServer | undefined;

  after(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await standby?.remove();
    await primary?.remove();
  });

  /** A web process over the primary and the standby, allowing the standby `maxLagMs` of lag. */
  async function startWeb(maxLagMs: number): Promise<Web> {
    const port = await freePort();
    await services.start('web', {
      PORT: String(port),
      // No pooler in front of these servers (the PgBouncer pass's direct URL is another server's).
      DATABASE_URL: primary!.url('ringlane'),
      DATABASE_DIRECT_URL: '',
      DATABASE_REPLICA_URL: standby!.url('ringlane'),
      DATABASE_REPLICA_MAX_LAG_MS: String(maxLagMs),
    });
    const url = `http://127.0.0.1:${port}`;
    return {
      url,
      replica: async () => {
        const res = await fetch(`${url}/readyz`);
        const body = (await res.json()) as { status: string; checks: { replica: string } };
        // The standby never makes the process unready: the primary serves its reads.
        expect([res.status, body.status]).to.deep.equal([200, 'ready']);
        return body.checks.replica;
      },
    };
  }

  const operatorAt = (url: string) => asCaller(config.operatorToken!, {}, url);
  const agentNames = async (caller: Caller): Promise<string[]> =>
    expectStatus(await caller.get('/v1/agents?limit=100'), 200).body.data.map((a: { name: string }) => a.name);
  const keyLabels = async (caller: Caller): Promise<string[]> =>
    expectStatus(await caller.get('/v1/api-keys?limit=100'), 200).body.data.map((k: { label: string }) => k.label);
  const replayPaused = async () => (await standby!.query<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state'))[0].state === 'paused';

  it('lists come from the standby, a credential always sees its own writes, a lagging or dead standby is skipped', async () => {
    primary = await PgServer.primary();
    await ensureDatabase(primary.url('ringlane'));
    await runMigrations(primary.url('ringlane'));
    standby = await primary.standby('replica');

    // Two processes that allow any lag the test makes (reads stay on the paused standby), one that allows 1 s.
    const lenient = await startWeb(600_000);
    const other = await startWeb(600_000);
    const strict = await startWeb(1000);
    for (const web of [lenient, other, strict]) await eventually(web.replica, (state) => state === 'ok', 'the standby serves');

    const created = expectStatus(await operatorAt(lenient.url).post('/admin/v1/orgs', { name: 'Replica Org' }), 201).body;
    const writerKey: string = created.api_key.key;
    const member = expectStatus(
      await operatorAt(lenient.url).post(`/admin/v1/orgs/${created.org.id}/members`, {
        email: uniqueEmail('reader'),
        capabilities: ['operate'],
      }),
      201,
    ).body;
    const writer = { here: asCaller(writerKey, {}, lenient.url), there: asCaller(writerKey, {}, other.url) };
    const reader = { lenient: asCaller(member.api_key.key, {}, lenient.url), strict: asCaller(member.api_key.key, {}, strict.url) };

    expectStatus(await writer.here.post('/v1/agents', { name: 'Before the pause' }), 201);
    // Replayed by the standby: the reader, who wrote nothing, reads it there as anywhere.
    await eventually(
      () => agentNames(reader.lenient),
      (names) => names.includes('Before the pause'),
      'the first agent reaches the standby',
    );

    await standby.query('SELECT pg_wal_replay_pause()');
    await eventually(replayPaused, Boolean, 'replay paused');
    expectStatus(await writer.here.post('/v1/agents', { name: 'While paused' }), 201);
    expectStatus(await writer.here.post('/v1/api-keys', { label: 'Key while paused', permissions: [] }), 201);

    // Read-your-writes: the writer's list, through another web process, has its write (replay is paused: from the primary).
    expect(await agentNames(writer.there)).to.include.members(['Before the pause', 'While paused']);
    expect(await agentNames(writer.here)).to.include.members(['Before the pause', 'While paused']);
    // Another credential's list, where the lag is allowed, comes from the paused standby: the new agent is not there yet.
    const stale = await agentNames(reader.lenient);
    expect(stale).to.include('Before the pause');
    expect(stale).not.to.include('While paused');
    // Another list, another repository: the same.
    expect(await keyLabels(writer.there)).to.include('Key while paused');
    expect(await keyLabels(reader.lenient)).not.to.include('Key while paused');
    expect(await lenient.replica()).to.equal('ok');

    // Where 1 s is the most allowed, the paused standby falls behind: skipped, and /readyz says so.
    await eventually(strict.replica, (state) => state === 'lagging', 'the strict process finds the standby lagging');
    expect(await agentNames(reader.strict)).to.include('While paused');

    await standby.query('SELECT pg_wal_replay_resume()');
    await eventually(strict.replica, (state) => state === 'ok', 'the standby serves again after resuming');
    await eventually(
      () => agentNames(reader.lenient),
      (names) => names.includes('While paused'),
      'the standby replays the paused write',
    );

    // A standby killed: reads go on from the primary, at once (no 5xx), and /readyz says it is down.
    await standby.kill();
    expectStatus(await writer.here.post('/v1/agents', { name: 'After the standby died' }), 201);
    for (const web of [reader.lenient, reader.strict]) expect(await agentNames(web)).to.include('After the standby died');
    for (const web of [lenient, other, strict]) await eventually(web.replica, (state) => state === 'down', 'the dead standby is reported down');
    expect(await agentNames(reader.lenient)).to.include.members(['Before the pause', 'While paused', 'After the standby died']);
  });
});
