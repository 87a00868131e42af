import 'reflect-metadata';
import path from 'node:path';
import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { config } from '../config.js';
import { logger } from './logger.js';

/**
 * How this process's connections appear in pg_stat_activity: `ringlane <entry file> <pid>`
 * (`ringlane relay 4242`), so an operator can tell which process holds which connection.
 */
export const applicationName = `ringlane ${path.basename(process.argv[1] ?? 'node').replace(/\.[cm]?[jt]s$/, '')} ${process.pid}`;

/** Builds a DataSource mapping `entities`, with `migrations`; the schema always comes from migrations, never `synchronize`. */
export function createDataSource(url: string, { entities = [], migrations = [] }: Pick<DataSourceOptions, 'entities' | 'migrations'> = {}): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    applicationName,
    extra: { max: config.databasePoolSize },
    // An idle pooled connection the server closed (restart, failover, pg_terminate_backend) is
    // dropped by the pool, which opens a new one when needed; TypeORM's own handler logs this
    // through its logger, which is off, so it is said here.
    poolErrorHandler: (err: Error) => logger.warn({ err: err.message }, 'Postgres closed an idle pooled connection; the pool opens a new one when needed'),
  });
}

/**
 * A pg pool of the process's own, for a hot path that owns its SQL (named statements, one
 * round trip each) instead of going through TypeORM.
 */
export function createPool(max: number, url = config.databaseUrl): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, application_name: applicationName, max });
  pool.on('error', (err) => logger.warn({ err: err.message }, 'Postgres closed an idle pooled connection; the pool opens a new one when needed'));
  return pool;
}

/** Resolves when Postgres answers a trivial query (the readiness probe); rejects when it does not. */
export async function pingDatabase(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}


/** Postgres SQLSTATE of an error thrown by a query, if it has one. */
export function pgCode(err: unknown): string | undefined {
  const driverError = (err as { driverError?: { code?: string } })?.driverError;
  return driverError?.code ?? (err as { code?: string })?.code;
}

export const PG_UNIQUE_VIOLATION = '23505';
