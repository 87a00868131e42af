// The Procfile `release` step: create the database if needed, migrate, exit.
import { config } from '../src/config.js';
import { logger } from '../src/lib/logger.js';
import { ensureDatabase, runMigrations } from '../src/migrations/migrate.js';

async function main(): Promise<string[]> {
  await ensureDatabase(config.databaseUrl);
  return runMigrations(config.databaseUrl);
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
