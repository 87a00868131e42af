import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, hasExited, stopProcess } from './processes.js';

/** Debian's package (`apt-get install pgbouncer`); 1.18 on Debian 12, without named prepared statements in transaction mode. */
const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface PgBouncerOptions {
  /** The Postgres server behind it, as libpq key=value pairs. */
  server?: { host: string; port: number };
  /** Server connections per database and user: small, so that many clients share few. */
  poolSize?: number;
}

/**
 * A PgBouncer of its own, in `pool_mode = transaction`, on a free loopback port, its config in a
 * temporary directory. Every database of the server behind it is reachable through it, those
 * created after it started too (the `*` entry), by any user the server trusts.
 */
export class PrivatePgBouncer {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly log: string[],
  ) {}

  /** A URL of the server `url` names, through this PgBouncer (same user and database). */
  through(url: string): string {
    const pooled = new URL(url);
    pooled.hostname = '127.0.0.1';
    pooled.port = String(this.port);
    return pooled.toString();
  }

  /** What it printed last, for a failure message. */
  tail(): string {
    return this.log.join('').slice(-3000);
  }

  static async start({ server = { host: '127.0.0.1', port: 5432 }, poolSize = 15 }: PgBouncerOptions = {}): Promise<PrivatePgBouncer> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ringlane-pgbouncer-'));
    const port = await freePort();
    const ini = path.join(dir, 'pgbouncer.ini');
    await writeFile(path.join(dir, 'users.txt'), '"postgres" ""\n');
    await writeFile(
      ini,
      [
        '[databases]',
        `* = host=${server.host} port=${server.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${path.join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        // Its console (the database `pgbouncer`): SHOW CLIENTS, SHOW SERVERS.
        'admin_users = postgres',
        'max_client_conn = 5000',
        `default_pool_size = ${poolSize}`,
        'reserve_pool_size = 0',
        // A whole test run's databases come and go: a pool of a dropped one is removed soon.
        'autodb_idle_timeout = 60',
        'log_connections = 0',
        'log_disconnections = 0',
        '',
      ].join('\n'),
    );
    // PgBouncer refuses to run as root: as root (CI), it becomes postgres, who must read the files.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) await chmod(dir, 0o755);
    const child = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
    const log: string[] = [];
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => log.push(d.toString()));
    const bouncer = new PrivatePgBouncer(port, child, dir, log);
    try {
      await bouncer.answers();
    } catch (err) {
      await bouncer.stop();
      throw new Error(`${(err as Error).message}\n${bouncer.tail()}`, { cause: err });
    }
    return bouncer;
  }

  /** Resolves once a query through it is answered (its `postgres` database). */
  private async answers(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (hasExited(this.child)) throw new Error(`pgbouncer on ${this.port} exited with ${this.child.exitCode ?? this.child.signalCode}`);
      const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${this.port}/postgres` });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`pgbouncer on ${this.port} did not answer within ${timeoutMs} ms: ${(err as Error).message}`, { cause: err });
      } finally {
        await client.end().catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** What its console says to `SHOW <what>` (CLIENTS, SERVERS, POOLS), a row per line, for the database `database`. */
  async show(what: 'CLIENTS' | 'SERVERS' | 'POOLS', database: string): Promise<Array<Record<string, unknown>>> {
    const console = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${this.port}/pgbouncer` });
    await console.connect();
    try {
      const { rows } = await console.query<Record<string, unknown>>(`SHOW ${what}`);
      return rows.filter((row) => row.database === database);
    } finally {
      await console.end();
    }
  }

  async stop(): Promise<void> {
    await stopProcess(this.child);
    await rm(this.dir, { recursive: true, force: true });
  }
}
