import pg from 'pg';
import { DataSource, type MigrationInterface } from 'typeorm';
import { config } from '../../src/config.js';
import { createDataSource } from '../../src/lib/db.js';
import { migrations } from '../../src/migrations/index.js';
import { ensureDatabase } from '../../src/migrations/migrate.js';

/**
 * An upgrade test's two views of a database of its own (named after this run's, with `suffix`):
 * `before` migrated up to `migration` (excluded: run it first), `upgraded` knowing the migrations up
 * to it included (later ones are not the test's business). The database is dropped afterwards.
 */
export async function withUpgrade(
  suffix: string,
  migration: new () => MigrationInterface,
  test: (dbs: { before: DataSource; upgraded: DataSource }) => Promise<void>,
): Promise<void> {
  // Directly: migrations run on a session connection (see scripts/migrate.ts).
  const url = new URL(config.databaseDirectUrl);
  url.pathname = `${url.pathname}_${suffix}`;
  await ensureDatabase(url.toString());
  const options = createDataSource(url.toString()).options;
  const upgrade = migrations.indexOf(migration);
  const before = await new DataSource({ ...options, migrations: migrations.slice(0, upgrade) }).initialize();
  const upgraded = await new DataSource({ ...options, migrations: migrations.slice(0, upgrade + 1) }).initialize();
  try {
    await before.runMigrations({ transaction: 'each' });
    await test({ before, upgraded });
  } finally {
    await before.destroy();
    await upgraded.destroy();
    const admin = new pg.Client({ connectionString: config.databaseDirectUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${url.pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
  }
}
