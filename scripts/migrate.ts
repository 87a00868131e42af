// The Procfile `release` step: create the database if needed, migrate, exit. On a session
// connection (DATABASE_DIRECT_URL when DATABASE_URL is a transaction pooler): a migration's
// transaction and the migrations table's lock must stay on one server connection.
import { config } from '../src/config.js';
import { logger } from '../src/lib/logger.js';
import { ensureDatabase, runMigrations } from '../src/migrations/migrate.js';

async function main(): Promise<string[]> {
  await ensureDatabase(config.databaseDirectUrl);
  return runMigrations(config.databaseDirectUrl);
}

main().then(
  (applied) => {
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema is up to date');
    process.exit(0);
  },
  (err) => {
    logger.fatal({ err }, 'migrations failed');
    process.exit(1);
  },
);
