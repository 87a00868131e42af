// Imported first by the root hooks, before anything reads the configuration: every test run
// gets its own Postgres database and its own Redis key prefix, so runs never collide.
import { randomBytes } from 'node:crypto';

const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
base.pathname = `/ringlane_test_${runId}`;

process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = base.toString();
process.env.REDIS_PREFIX = `rltest_${runId}`;
process.env.OPERATOR_TOKEN = 'test-operator-token-0123456789';
process.env.WEBHOOK_BACKOFF_BASE_MS ??= '100';
process.env.SIM_RING_MS ??= '20';
process.env.SIM_SECOND_MS ??= '2';
