// `npm start` (scripts/start.ts and scripts/supervisor.ts) as a user runs it: a real supervisor
// with every Procfile process, stopped as a terminal's Ctrl-C stops it, i.e. SIGINT to its whole
// process group. The Procfile lines run the compiled code, so the tests build it first.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'chai';
import pg from 'pg';
import { config } from '../../src/config.js';
import { migrations } from '../../src/migrations/index.js';
import { databaseEnv } from '../helpers/db.js';
import { exitCodeOf, freePort, SERVICES, waitForHttp, waitUntil } from '../helpers/processes.js';
import { unreachableRedis } from '../helpers/redis.js';
import { withoutColours } from '../helpers/terminal.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server.js';

const run = promisify(execFile);

interface Supervisor {
  child: ChildProcess;
  out: () => string;
  err: () => string;
}

/** Starts `npm start`'s entry in a process group of its own, as a shell starts a foreground job. */
function startSupervisor(env: Record<string, string | undefined>): Supervisor {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d.toString()));
  child.stderr.on('data', (d: Buffer) => err.push(d.toString()));
  return { child, out: () => out.join(''), err: () => err.join('') };
}

/** What a terminal does on Ctrl-C: SIGINT to every process of the foreground group. */
const ctrlC = (supervisor: Supervisor) => process.kill(-supervisor.child.pid!, 'SIGINT');

const KINDS = Object.keys(SERVICES) as Array<keyof typeof SERVICES>;

/** Resolves once every Procfile process logged that it serves (and /readyz answers 200). */
async function waitUntilRunning(supervisor: Supervisor, port: number): Promise<void> {
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, 30_000).catch((err) => {
    throw new Error(`${err.message}\n${supervisor.out()}\n${supervisor.err()}`);
  });
  const started = (kind: (typeof KINDS)[number]) =>
    supervisor
      .out()
      .split('\n')
      .some((line) => line.startsWith(`[${kind}] `) && line.includes(SERVICES[kind].ready));
  await waitUntil(
    'every process started',
    async () => KINDS.every(started),
    20_000,
    () => supervisor.out() + supervisor.err(),
  );
}

/** No stack trace, no error printed: what a user sees on a clean stop. */
function expectNoErrors(supervisor: Supervisor): void {
  const printed = supervisor.out() + supervisor.err();
  expect(printed, printed).not.to.match(/^\s+at /m);
  expect(printed, printed).not.to.include('Error:');
}

async function adminQuery(sql: string): Promise<pg.QueryResult> {
  const admin = new URL(config.databaseDirectUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('npm start (the supervisor)', function () {
  this.timeout(90_000);
  const supervisors: Supervisor[] = [];
  const testDatabase = new URL(config.databaseUrl).pathname.slice(1);
  // A Redis of its own: the job schedulers the supervised workers create must not change when
  // other tests' workers (sharing the run's key prefix) run their scheduled jobs.
  let redis: PrivateRedis;

  before(async function () {
    this.timeout(120_000);
    await run('npm', ['run', '-s', 'build']);
    redis = await startPrivateRedis();
  });

  after(async () => {
    await redis?.stop();
  });

  afterEach(async () => {
    for (const { child } of supervisors.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      process.kill(-child.pid!, 'SIGKILL');
      await exitCodeOf(child);
    }
  });

  it('runs every Procfile line but release (the list the tests use)', () => {
    const lines = readFileSync('Procfile', 'utf8')
      .split('\n')
      .map((l) => /^([a-z]+):/.exec(l)?.[1])
      .filter((n) => n && n !== 'release');
    expect(lines).to.deep.equal(KINDS);
  });

  it('Ctrl-C (SIGINT to its process group) stops every process cleanly, then exits 0; no stack trace, no error', async () => {
    const port = await freePort();
    const supervisor = startSupervisor({ ...process.env, ...redis.env, PORT: String(port), LOG_LEVEL: 'info' });
    supervisors.push(supervisor);
    await waitUntilRunning(supervisor, port);

    ctrlC(supervisor);
    expect(await exitCodeOf(supervisor.child), supervisor.out() + supervisor.err()).to.equal(0);
    const lines = supervisor.out().split('\n');
    const lineOf = (kind: string, text: string) => lines.findIndex((l) => l.startsWith(`[${kind}] `) && l.includes(text));
    for (const kind of KINDS) {
      // Stopped by the supervisor's SIGTERM: Ctrl-C itself never reached the processes.
      const finishing = lines[lineOf(kind, 'finishing in-flight work')] ?? '';
      expect(JSON.parse(finishing.slice(kind.length + 3)).signal, `${kind}: ${finishing}`).to.equal('SIGTERM');
      expect(lineOf(kind, 'stopped cleanly'), `${kind} stopped cleanly`).to.be.above(-1);
      expect(lineOf(kind, 'stopped cleanly')).to.be.below(lineOf('start', 'every process stopped'));
    }
    expect(supervisor.err()).not.to.include('OPERATOR_TOKEN');
    expectNoErrors(supervisor);
  });

  it('in a terminal (a pseudo-terminal of util-linux `script`) every process prints readable coloured lines behind its bold name, not JSON; Ctrl-C stops all', async () => {
    const port = await freePort();
    const { LOG_FORMAT: _unset, ...env } = process.env;
    // `exec`: script(1) runs the command through $SHELL, and a shell left waiting in between (dash,
    // CI's /bin/sh) would itself die of the Ctrl-C (exit 130) whatever the supervisor does.
    const command = `exec ${process.execPath} --import tsx scripts/start.ts`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...env, ...redis.env, SHELL: '/bin/sh', PORT: String(port), LOG_LEVEL: 'info' },
      detached: true,
    });
    const chunks: string[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d.toString()));
    const supervisor: Supervisor = { child, out: () => chunks.join(''), err: () => '' };
    supervisors.push(supervisor);
    const lines = () => withoutColours(supervisor.out()).split(/\r?\n/);
    const started = (kind: (typeof KINDS)[number]) => lines().some((line) => line.startsWith(`[${kind}] `) && line.includes(SERVICES[kind].ready));
    await waitUntil(
      'every process started',
      async () => KINDS.every(started),
      60_000,
      () => supervisor.out(),
    );
    for (const kind of KINDS) {
      expect(supervisor.out()).to.include(`\x1b[1m[${kind}]\x1b[0m `);
      const own = lines().filter((line) => line.startsWith(`[${kind}] `));
      for (const line of own) expect(line).to.match(new RegExp(`^\\[${kind}\\] \\d\\d:\\d\\d:\\d\\d\\.\\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \\S`));
    }
    expect(supervisor.out()).to.include('\x1b[32mINFO ');
    child.stdin.write('\x03'); // Ctrl-C at the terminal
    expect(await exitCodeOf(child), supervisor.out()).to.equal(0);
  });

  it("web and calls, which take in new work, run at CPU niceness INTAKE_NICE when it is set; relay and webhooks at the supervisor's", async () => {
    const port = await freePort();
    const supervisor = startSupervisor({ ...process.env, ...redis.env, PORT: String(port), LOG_LEVEL: 'info', INTAKE_NICE: '19' });
    supervisors.push(supervisor);
    await waitUntilRunning(supervisor, port);
    // Every process under `npm start`, with its niceness, by the Procfile entry it runs.
    const { stdout } = await run('ps', ['-e', '-o', 'pid=,ppid=,ni=,args=']);
    const rows = stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.trim().split(/\s+/))
      .map(([pid, ppid, ni, ...args]) => ({ pid, ppid, ni: Number(ni), args: args.join(' ') }));
    const under = new Set([String(supervisor.child.pid)]);
    for (let grew = true; grew;) {
      grew = false;
      for (const row of rows) if (under.has(row.ppid) && !under.has(row.pid)) grew = Boolean(under.add(row.pid));
    }
    const niceOf = (entry: string) => rows.filter((r) => under.has(r.pid) && r.args.includes(entry)).map((r) => r.ni);
    expect(niceOf('dist/src/server.js'), stdout).to.deep.equal([19]);
    expect(niceOf('dist/workers/calls.js'), stdout).to.deep.equal([19]);
    expect(niceOf('dist/workers/relay.js'), stdout).to.deep.equal([0]);
    expect(niceOf('dist/workers/webhooks.js'), stdout).to.deep.equal([0]);
  });

  it('creates the database a DATABASE_URL names when it does not exist, and warns once that OPERATOR_TOKEN is not set', async () => {
    const name = `${testDatabase}_fresh`;
    const database = databaseEnv(name);
    const port = await freePort();
    const { OPERATOR_TOKEN: _unset, ...env } = process.env;
    const supervisor = startSupervisor({ ...env, ...redis.env, ...database, PORT: String(port), LOG_LEVEL: 'info' });
    supervisors.push(supervisor);
    try {
      await waitUntilRunning(supervisor, port);
      expect(supervisor.out()).to.include(`[start] created the database ${name}`);
      const client = new pg.Client({ connectionString: database.DATABASE_URL });
      await client.connect();
      const { rows } = await client.query('SELECT count(*)::int AS n FROM migrations');
      await client.end();
      expect(rows[0].n).to.equal(migrations.length);
      const warnings = supervisor
        .err()
        .split('\n')
        .filter((l) => l.includes('OPERATOR_TOKEN'));
      expect(warnings).to.have.lengthOf(1);
      expect(warnings[0]).to.match(/^\[start\] warning: OPERATOR_TOKEN is not set, so the admin API .* refuse everyone/);

      ctrlC(supervisor);
      expect(await exitCodeOf(supervisor.child)).to.equal(0);
      expectNoErrors(supervisor);
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });

  it('a Redis that does not answer: exits 1 naming it (REDIS_CLUSTER_NODES on a cluster), with no stack trace, before touching the database', async () => {
    const supervisor = startSupervisor({ ...process.env, ...unreachableRedis().env, PORT: String(await freePort()) });
    supervisors.push(supervisor);
    expect(await exitCodeOf(supervisor.child)).to.equal(1);
    const said = supervisor.err();
    expect(said).to.include('[start] cannot start Ringlane: ');
    expect(said).to.include(
      config.redis.mode === 'cluster'
        ? 'The Redis Cluster REDIS_CLUSTER_NODES names (127.0.0.1:1) is not answering'
        : 'Redis is not answering at redis://127.0.0.1:1',
    );
    expect(said).not.to.match(/^\s+at /m);
    expect(supervisor.out()).not.to.include('database');
  });

  it('a database that does not exist and a role that may not create it: exits 1 saying so and what to do, with no stack trace', async () => {
    const role = `${testDatabase}_nocreate`;
    const name = `${testDatabase}_denied`;
    await adminQuery(`CREATE ROLE "${role}" LOGIN NOCREATEDB`);
    try {
      const supervisor = startSupervisor({ ...process.env, ...redis.env, ...databaseEnv(name, role), PORT: String(await freePort()) });
      supervisors.push(supervisor);
      expect(await exitCodeOf(supervisor.child)).to.equal(1);
      const said = supervisor.err();
      expect(said).to.include(`[start] cannot start Ringlane: the database "${name}" does not exist`);
      expect(said).to.include(`${role} may not create it (permission denied to create database)`);
      expect(said).to.include('createdb');
      expect(said).not.to.match(/^\s+at /m);
      const { rowCount } = await adminQuery(`SELECT 1 FROM pg_database WHERE datname = '${name}'`);
      expect(rowCount).to.equal(0);
    } finally {
      await adminQuery(`DROP ROLE IF EXISTS "${role}"`);
    }
  });
});
