import 'reflect-metadata';
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { DataSource, type DataSourceOptions, type EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { config } from '../config.js';
import { logger } from './logger.js';

/** This process's name in pg_stat_activity, `ringlane <entry file> <pid>`, to tell who holds a connection. */
export const applicationName = `ringlane ${path.basename(process.argv[1] ?? 'node').replace(/\.[cm]?[jt]s$/, '')} ${process.pid}`;

/**
 * How long a pooled connection may stay idle (pg's default: 10 s). A new backend plans its first
 * statements against cold catalog caches, several ms each, so a pool that shrank between bursts
 * paid that again at every burst.
 */
const IDLE_CONNECTION_MS = 60_000;

/**
 * A pg client that an `error` event never ends the process with. pg-pool listens for errors only
 * while a client is idle, and TypeORM only once the connection it was handed reaches its promise's
 * `then`: a backend's last words (`terminating connection due to unexpected postmaster exit`, a
 * primary dying) read with the message that gave the client to TypeORM, or to a holder between two
 * statements, was an unhandled `error` that killed the worker in a failover. The failure is not
 * lost: the holder's next statement on the client fails, and it is released with that error and
 * dropped; an idle one is dropped by the pool.
 */
export class GuardedClient extends pg.Client {
  constructor(settings?: string | pg.ClientConfig) {
    super(settings);
    this.on('error', (err) => logger.debug({ err: err.message }, 'a Postgres connection failed; the statement on it fails and it is replaced'));
  }
}

/**
 * Builds a DataSource mapping `entities`, with `migrations`; the schema always comes from migrations, never `synchronize`.
 * `connectTimeoutMs`: how long opening a connection may take (unset: no limit, pg's default).
 */
export function createDataSource(
  url: string,
  { entities = [], migrations = [], connectTimeoutMs }: Pick<DataSourceOptions, 'entities' | 'migrations'> & { connectTimeoutMs?: number } = {},
): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    applicationName,
    extra: { Client: GuardedClient, max: config.databasePoolSize, idleTimeoutMillis: IDLE_CONNECTION_MS, connectionTimeoutMillis: connectTimeoutMs },
    // The pool replaces an idle connection the server closed; TypeORM's logger is off, so say it here.
    poolErrorHandler: (err: Error) => logger.warn({ err: err.message }, 'Postgres closed an idle pooled connection; the pool opens a new one when needed'),
  });
}

/**
 * A pg pool of its own, for a hot path with its own SQL (named statements, one round trip each):
 * on a session connection (`DATABASE_DIRECT_URL`, or `DATABASE_URL` when that is unset), where a
 * statement prepared once stays prepared.
 */
export function createPool(max: number, url = config.databaseDirectUrl): pg.Pool {
  const pool = new pg.Pool({ Client: GuardedClient, connectionString: url, application_name: applicationName, max, idleTimeoutMillis: IDLE_CONNECTION_MS });
  pool.on('error', (err) => logger.warn({ err: err.message }, 'Postgres closed an idle pooled connection; the pool opens a new one when needed'));
  return pool;
}

/**
 * Runs a named statement on `on`'s connection (a DataSource's pool, or the transaction an
 * EntityManager runs): Postgres parses and plans it once per connection rather than at every
 * execution, about half the server's CPU for the API's hottest write, and for a list. For the few
 * statements run per call, and every list (`listPage`, named by `statementName`); TypeORM's
 * `query()` sends every statement unnamed. Through a transaction pooler (`DATABASE_DIRECT_URL`
 * set) the statement goes unnamed: PgBouncer before 1.21 hands each transaction whichever server
 * connection is free, where a name prepared on another is unknown (or, worse, another text's).
 */
export async function namedQuery<R>(on: DataSource | EntityManager, name: string, text: string, values: unknown[]): Promise<R[]> {
  const runner = on instanceof DataSource ? undefined : on.queryRunner;
  const client = (runner ? await runner.connect() : ((on instanceof DataSource ? on : on.connection).driver as PostgresDriver).master) as
    pg.Pool | pg.PoolClient;
  const { rows } = await client.query<R & pg.QueryResultRow>(config.databasePooled ? { text, values } : { name, text, values });
  return rows;
}

/** Statement names by text (texts come from code: a bounded number). */
const statementNames = new Map<string, string>();

/**
 * A name only this text has, for SQL assembled from code (a list's filters): Postgres keeps a
 * named statement per connection under it, and a name sent with another text is an error.
 */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `rl_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** The readiness probe: resolves when Postgres answers a trivial query. */
export async function pingDatabase(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}

/** Postgres SQLSTATE of an error thrown by a query, if it has one. */
export function pgCode(err: unknown): string | undefined {
  const driverError = (err as { driverError?: { code?: string } })?.driverError;
  return driverError?.code ?? (err as { code?: string })?.code;
}

export const PG_UNIQUE_VIOLATION = '23505';
