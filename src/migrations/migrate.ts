import pg from 'pg';
import { createDataSource } from '../lib/db.js';
import { migrations } from './index.js';

const codeOf = (err: unknown) => (err as { code?: string }).code;

/** Creates the database in `url` if missing (connecting to `postgres` only then); a role without CREATEDB is told what to do. */
export async function ensureDatabase(url: string): Promise<'existed' | 'created'> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const probe = new pg.Client({ connectionString: url });
  try {
    await probe.connect();
    return 'existed';
  } catch (err) {
    if (codeOf(err) !== '3D000') throw err; // anything but "database does not exist"
  } finally {
    await probe.end().catch(() => undefined);
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const role = decodeURIComponent(target.username) || 'the connecting role';
  const client = new pg.Client({ connectionString: admin.toString() });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return 'created';
  } catch (err) {
    if (codeOf(err) === '42P04') return 'existed'; // created meanwhile by another process
    const why = (err as Error).message;
    if (codeOf(err) === '42501') {
      throw new Error(
        `the database "${name}" does not exist at ${target.host}, and ${role} may not create it (${why}). ` +
          `Create it with a role that may (e.g. \`createdb -h ${target.hostname} -p ${target.port || 5432} -U postgres -O ${role} ${name}\`), ` +
          `or give ${role} the right to (ALTER ROLE ... CREATEDB), or point DATABASE_URL at an existing database.`,
        { cause: err },
      );
    }
    throw new Error(`the database "${name}" does not exist at ${target.host} and could not be created: ${why}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Applies every pending migration to the database at `url`; returns the names applied. */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = createDataSource(url, { migrations });
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}
