// Imported first by the root hooks, before anything reads the configuration: every test run
// gets its own Postgres database and its own Redis key prefix, so runs never collide.
// TEST_DATABASE_DIRECT_URL set (`npm run test:pgbouncer`): TEST_DATABASE_URL is a transaction
// pooler in front of that server, and the run's database is reached both ways.
import { randomBytes } from 'node:crypto';

const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;

/** `url` (a server's) with this run's database. */
function runDatabase(url: string): string {
  const base = new URL(url);
  base.pathname = `/ringlane_test_${runId}`;
  return base.toString();
}

process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = runDatabase(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
if (process.env.TEST_DATABASE_DIRECT_URL) process.env.DATABASE_DIRECT_URL = runDatabase(process.env.TEST_DATABASE_DIRECT_URL);
process.env.REDIS_PREFIX = `rltest_${runId}`;
process.env.OPERATOR_TOKEN = 'test-operator-token-0123456789';
process.env.WEBHOOK_BACKOFF_BASE_MS ??= '100';
process.env.SIM_RING_MS ??= '20';
process.env.SIM_SECOND_MS ??= '2';
