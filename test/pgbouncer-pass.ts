// `npm run test:pgbouncer`: the test suite again, through PgBouncer in transaction pooling.
// Starts a PgBouncer of its own (pool_mode = transaction, 15 server connections per database, in
// front of the Postgres on 127.0.0.1:5432, or TEST_DATABASE_DIRECT_URL's), then runs mocha with
// DATABASE_URL through it and DATABASE_DIRECT_URL at Postgres itself (see test/helpers/env.ts),
// as a deployment behind a transaction pooler is configured; mocha's own arguments pass through
// (`npx tsx test/pgbouncer-pass.ts test/calls/*.test.ts`). Stops it and exits with mocha's code.
import { runMochaPass } from './helpers/mocha-pass.js';
import { PrivatePgBouncer } from './helpers/pgbouncer.js';

const direct = process.env.TEST_DATABASE_DIRECT_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const server = new URL(direct);

runMochaPass(
  'pgbouncer pass',
  async () => {
    const bouncer = await PrivatePgBouncer.start({ server: { host: server.hostname, port: Number(server.port || 5432) } });
    return {
      env: { TEST_DATABASE_URL: bouncer.through(direct), TEST_DATABASE_DIRECT_URL: direct },
      stop: () => bouncer.stop(),
    };
  },
  (target) =>
    `PgBouncer in transaction pooling, DATABASE_URL through ${target.env.TEST_DATABASE_URL}, DATABASE_DIRECT_URL at ${direct} (each with the run's database)`,
);
