import { expect } from 'chai';
import { once } from 'node:events';
import net from 'node:net';
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { db } from '../helpers/db.js';
import request from 'supertest';
import { app, bearer, createOrg } from '../helpers/api.js';
import { exitCodeOf, freePort, slowPost, startProcess, waitForHttp } from '../helpers/processes.js';

describe('the web process', () => {
  it('on SIGTERM finishes the request in flight, flushes last_used_at and exits 0', async function () {
    this.timeout(30_000);
    const org = await createOrg();
    const port = await freePort();
    const web = startProcess('src/server.ts', { PORT: String(port) });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      const response = slowPost(port, '/v1/api-keys', org.key, { label: 'in flight', permissions: ['operate'] }, async () => {
        await new Promise((r) => setTimeout(r, 200));
        web.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 300));
      });
      const { status, body } = await response;
      expect(status).to.equal(201);
      expect(body.label).to.equal('in flight');
      expect(await exitCodeOf(web)).to.equal(0);
      const [row] = await db.query('SELECT last_used_at FROM api_keys WHERE id = $1', [org.keyId]);
      expect(row.last_used_at).to.be.instanceOf(Date);
    } finally {
      web.kill('SIGKILL');
    }
  });
});

describe('the web process on a port already taken', () => {
  it('exits 1 with a log line saying why, and no stack dump on stderr', async function () {
    this.timeout(30_000);
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const web = startProcess('src/server.ts', { PORT: String((taken.address() as net.AddressInfo).port), LOG_LEVEL: 'info' });
    let stdout = '';
    let stderr = '';
    web.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    web.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      expect(await exitCodeOf(web)).to.equal(1);
      expect(stdout)
        .to.match(/"msg":"the API could not start"/)
        .and.to.include('EADDRINUSE');
      expect(stderr).to.equal('');
    } finally {
      web.kill('SIGKILL');
      taken.close();
    }
  });
});

/** Resolves once `worker` logs that it started. */
function workerStarted(worker: ChildProcess): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    worker.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('worker started') && resolve());
    worker.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

describe('a worker process', () => {
  it('on SIGTERM closes its worker and exits 0', async function () {
    this.timeout(30_000);
    const worker = startProcess('workers/maintenance.ts', { LOG_LEVEL: 'info' });
    try {
      await workerStarted(worker);
      worker.kill('SIGTERM');
      expect(await exitCodeOf(worker)).to.equal(0);
    } finally {
      worker.kill('SIGKILL');
    }
  });

  it('on SIGTERM exits though its log reader is gone (a supervisor killed), rather than retrying the write forever', async function () {
    this.timeout(30_000);
    const worker = startProcess('workers/maintenance.ts', { LOG_LEVEL: 'info' });
    try {
      await workerStarted(worker);
      // Its stdout's reader closes: what it logs while stopping meets EPIPE.
      worker.stdout!.destroy();
      worker.kill('SIGTERM');
      const stillRunning = new Promise<unknown[]>((r) => setTimeout(() => r(['still running 15 s after SIGTERM']), 15_000));
      const [code] = await Promise.race([once(worker, 'exit'), stillRunning]);
      expect(code).to.be.a('number');
    } finally {
      worker.kill('SIGKILL');
    }
  });

  for (const kind of ['maintenance', 'relay']) {
    it(`${kind}: SIGTERM while the database has not answered yet stops it cleanly (exit 0), as once it serves`, async function () {
      this.timeout(30_000);
      // A "database" that takes the connection and never answers: the worker waits in its start.
      const silent = net.createServer(() => undefined);
      silent.listen(0, '127.0.0.1');
      await once(silent, 'listening');
      const connected = once(silent, 'connection');
      const { port } = silent.address() as net.AddressInfo;
      const worker = startProcess(`workers/${kind}.ts`, { LOG_LEVEL: 'info', DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/ringlane` });
      let output = '';
      worker.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await connected;
        worker.kill('SIGTERM');
        expect(await exitCodeOf(worker), output).to.equal(0);
        expect(output).to.include(`${kind} worker: stopped cleanly`);
      } finally {
        worker.kill('SIGKILL');
        silent.close();
      }
    });
  }
});

describe('the ops command line', () => {
  const ops = (...args: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/ops.ts', ...args], { env: process.env });

  it('lists its commands with --help', async () => {
    const { stdout } = await ops('--help');
    for (const command of ['orgs:create', 'orgs:show', 'orgs:update', 'orgs:balance', 'members:add', 'webhooks:retry-failed'])
      expect(stdout).to.contain(command);
  });

  it('creates an organization and adjusts its balance, printing JSON', async function () {
    this.timeout(20_000);
    const created = JSON.parse((await ops('orgs:create', '--name', 'CLI Co', '--reseller', '--per-minute', '0.12', '--balance', '10')).stdout);
    expect(created.org).to.include({ name: 'CLI Co', reseller: true, balance: '10.000000' });
    expect(created.org.rates.per_minute).to.equal('0.120000');
    expect(created.api_key.key).to.match(/^rk_live_/);
    const balance = JSON.parse((await ops('orgs:balance', created.org.id, '-2.5')).stdout);
    expect(balance).to.deep.equal({ balance: '7.500000', currency: 'USD' });
  });

  it('webhooks:retry-failed makes the matching failed deliveries due again and prints how many', async function () {
    this.timeout(20_000);
    const org = await createOrg();
    const endpoint = await request(await app())
      .post('/v1/webhook-endpoints')
      .set('Authorization', bearer(org.key))
      .send({ name: 'E', url: 'http://127.0.0.1:9/hooks', secret: 'a-secret-value', outcomes: [] })
      .expect(201);
    await db.query(
      `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count)
       SELECT 'dlv_ops' || g || $3, $1, $2, 'evt_ops' || g || $3, 'call_x', 'call.completed', 4, CASE WHEN g <= 3 THEN 'failed' ELSE 'succeeded' END, 12
         FROM generate_series(1, 5) g`,
      [org.id, endpoint.body.id, process.pid],
    );
    const printed = JSON.parse((await ops('webhooks:retry-failed', '--endpoint', endpoint.body.id)).stdout);
    expect(printed).to.deep.equal({ matched: 3, queued: 3 });
    const rows = await db.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status ORDER BY status`, [
      endpoint.body.id,
    ]);
    expect(rows).to.deep.equal([
      { status: 'retrying', n: 3 },
      { status: 'succeeded', n: 2 },
    ]);
  });

  it('run as `npm run -s ops -- <command>`, prints nothing on stdout but the JSON; without -s, says so on stderr', async function () {
    this.timeout(120_000); // npm builds the project first
    const org = await createOrg({ name: 'Through npm' });
    // As from a shell: a surrounding `npm test -s` would pass npm_config_loglevel=silent down.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
    const quiet = await promisify(execFile)('npm', ['run', '-s', 'ops', '--', 'orgs:show', org.id], { env });
    expect(JSON.parse(quiet.stdout)).to.include({ id: org.id, name: 'Through npm' });
    expect(quiet.stderr).to.not.contain('npm run -s ops');
    const noisy = await promisify(execFile)('npm', ['run', 'ops', '--', 'orgs:show', org.id], { env });
    expect(noisy.stdout).to.contain('> ringlane@');
    expect(noisy.stderr).to.contain('run `npm run -s ops -- ...` to pipe the JSON alone');
  });

  it('prints a JSON error and exits non-zero on bad input', async function () {
    this.timeout(20_000);
    const failure = await ops('orgs:balance', 'org_missing', 'abc').then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure?.code).to.equal(1);
    expect(JSON.parse(failure!.stderr).error.code).to.equal('invalid_request');
  });
});
