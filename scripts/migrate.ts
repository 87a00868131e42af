// The Procfile `release` step: applies pending migrations, then exits.
import { config } from '../src/config.js';
import { logger } from '../src/lib/logger.js';
import { runMigrations } from '../src/lib/migrate.js';

runMigrations(config.databaseUrl).then(
  (applied) => {
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema is up to date');
    process.exit(0);
  },
  (err) => {
    logger.fatal({ err }, 'migrations failed');
    process.exit(1);
  },
);
