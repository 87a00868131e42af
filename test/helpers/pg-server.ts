import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, hasExited } from './processes.js';

const run = promisify(execFile);

/** Debian's PostgreSQL server binaries (the `postgresql` package; .ci/run installs what is missing). */
const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const bin = (name: string) => path.join(BIN, name);

/** postgres(1) refuses to run as root: as root, the servers run as the `postgres` user. */
const asRoot = process.getuid?.() === 0;
const owned = async (dir: string) => {
  if (asRoot) await run('chown', ['-R', 'postgres:postgres', dir]);
};
const asServerUser = (command: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];

/** Settings every server of a test gets: small, quick to start, ready to stream to a standby. */
const BASE_SETTINGS = `
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 200
shared_buffers = 32MB
fsync = off
full_page_writes = on
wal_level = replica
max_wal_senders = 5
wal_keep_size = 256MB
hot_standby = on
hot_standby_feedback = on
logging_collector = off
`;

export interface PgServerOptions {
  /** Extra postgresql.conf lines (synchronous_standby_names, ...). */
  settings?: string;
}

/**
 * A PostgreSQL server of a test's own (initdb into a temporary directory, a free loopback port,
 * trust authentication, replication allowed): a primary, or a hot standby made from one with
 * pg_basebackup. Killed with SIGKILL it dies as in a crash; a standby can be promoted.
 */
export class PgServer {
  private child: ChildProcess | null = null;
  private output = '';

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /** A new primary, started. */
  static async primary(options: PgServerOptions = {}): Promise<PgServer> {
    const dir = await mkdtemp(path.join(tmpdir(), 'ringlane-pg-'));
    await owned(dir);
    const data = path.join(dir, 'data');
    await run(...asServerUser(bin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']));
    const server = new PgServer(dir, await freePort());
    await appendFile(path.join(data, 'postgresql.conf'), `${BASE_SETTINGS}\nport = ${server.port}\n${options.settings ?? ''}\n`);
    await appendFile(path.join(data, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    await server.start();
    return server;
  }

  /**
   * A hot standby of this server, streaming from it (pg_basebackup -R writes standby.signal and
   * primary_conninfo), started and replaying. `name` is its application_name, which
   * synchronous_standby_names on the primary may list.
   */
  async standby(name = 'standby', options: PgServerOptions = {}): Promise<PgServer> {
    const dir = await mkdtemp(path.join(tmpdir(), 'ringlane-pg-standby-'));
    await owned(dir);
    const data = path.join(dir, 'data');
    await run(
      ...asServerUser(bin('pg_basebackup'), ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-D', data, '-X', 'stream', '-R', '-c', 'fast']),
    );
    const server = new PgServer(dir, await freePort());
    // postgresql.auto.conf is read last: its primary_conninfo (written by -R) is replaced there.
    // The primary's synchronous_standby_names came with the copy: promoted, this server waits for none.
    await appendFile(
      path.join(data, 'postgresql.auto.conf'),
      `port = ${server.port}\nprimary_conninfo = 'host=127.0.0.1 port=${this.port} user=postgres application_name=${name}'\nsynchronous_standby_names = ''\n${options.settings ?? ''}\n`,
    );
    await server.start();
    return server;
  }

  /** A connection string to `database` on this server. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server (again); resolves once it accepts connections. */
  async start(): Promise<void> {
    this.output = '';
    const [command, args] = asServerUser(bin('postgres'), ['-D', this.data]);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child = child;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres on ${this.port} exited: ${this.output}`);
      if (await this.answers()) return;
      if (Date.now() > deadline) throw new Error(`postgres on ${this.port} did not start: ${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** One query on a connection of its own. */
  async query<R = Record<string, unknown>>(sql: string, values: unknown[] = [], database = 'postgres'): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return (await client.query(sql, values)).rows as R[];
    } finally {
      await client.end();
    }
  }

  /** `pg_ctl promote`: a standby becomes a primary; resolves once it accepts writes. */
  async promote(): Promise<void> {
    await run(...asServerUser(bin('pg_ctl'), ['promote', '-w', '-D', this.data]));
  }

  /** SIGKILL to the postmaster and every backend at once, as in a crash of the machine's Postgres. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child) return;
    const postmaster = await this.postmasterPid();
    const { stdout } = await run('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
    await run('kill', ['-KILL', String(postmaster), ...stdout.split(/\s+/).filter(Boolean)]);
    if (!hasExited(child)) await once(child, 'exit');
  }

  /** Stops the server (fast shutdown) and removes its directory. */
  async remove(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && !hasExited(child)) {
      await run(...asServerUser(bin('pg_ctl'), ['stop', '-m', 'fast', '-w', '-D', this.data])).catch(() => undefined);
      if (!hasExited(child)) await once(child, 'exit');
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  /** What the server printed (its log) since it last started. */
  log(): string {
    return this.output;
  }

  private get data(): string {
    return path.join(this.dir, 'data');
  }

  /** The postmaster's own pid (under runuser, the child this test spawned is runuser). */
  private async postmasterPid(): Promise<number> {
    return Number((await readFile(path.join(this.data, 'postmaster.pid'), 'utf8')).split('\n', 1)[0]);
  }

  private async answers(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
