import './env.js';
import pg from 'pg';
import { config } from '../../src/config.js';
import { db } from './db.js';
import { ensureDatabase, runMigrations } from '../../src/migrations/migrate.js';
import { waitForRedis } from '../../src/lib/redis.js';
import { takeViolations } from './openapi-check.js';
import { closeRedisForTests, deleteKeys, redisForTests } from './redis.js';
import { strayProcesses, testFileOf } from './processes.js';

// A warning (a deprecated call, a listener leak) is a defect to fix where it comes from: the run
// fails on any the test process emits, naming each with where it was raised.
const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(warning.stack ?? `${warning.name}: ${warning.message}`));

const late: string[] = [];
const strays: string[] = [];

/**
 * Creates this run's database from the migrations, and removes it and its Redis keys
 * afterwards; fails the run if the test process emitted a warning, if a test file left a process
 * running, and a test that received a response outside the OpenAPI document (see
 * test/helpers/openapi-check.ts).
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await ensureDatabase(config.databaseDirectUrl);
    await runMigrations(config.databaseDirectUrl);
    await db.initialize();
  },
  /**
   * A response outside the OpenAPI document fails the test that received it: the check runs
   * at the end of the test's own function, because a failing root hook would make Mocha skip
   * every later test of the run. For the same reason a process an earlier test file left
   * running is killed here and named when the run ends.
   */
  async beforeEach(this: Mocha.Context) {
    this.timeout(30_000);
    const test = this.currentTest!;
    const file = testFileOf(test.file ?? '');
    if (file) strays.push(...(await strayProcesses(file)));
    const body = test.fn as ((this: Mocha.Context) => unknown) | undefined;
    if (!body || body.length > 0) return;
    test.fn = async function (this: Mocha.Context) {
      await body.call(this);
      const outside = takeViolations();
      if (outside.length) throw new Error(`${outside.length} response(s) outside the OpenAPI document:\n${outside.join('\n')}`);
    };
  },
  /** Responses that finished after their test's function: reported when the run ends. */
  afterEach(this: Mocha.Context) {
    for (const violation of takeViolations()) late.push(`${this.currentTest?.fullTitle()}: ${violation}`);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    strays.push(...(await strayProcesses(null)));
    await db.destroy();
    const redis = redisForTests();
    // A run of unit tests alone never used Redis: the connection is only opening now, and a
    // command connection refuses commands until it is ready.
    await waitForRedis(redis, 5000);
    await deleteKeys(redis, `${config.redisPrefix}:*`);
    await closeRedisForTests();
    const admin = new URL(config.databaseDirectUrl);
    const name = admin.pathname.slice(1);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
    if (warnings.length) throw new Error(`the tests emitted ${warnings.length} warning(s):\n${warnings.join('\n')}`);
    if (strays.length) throw new Error(`${strays.length} process(es) a test file left running (killed when found):\n${strays.join('\n')}`);
    if (late.length) throw new Error(`${late.length} response(s) outside the OpenAPI document, after their test:\n${late.join('\n')}`);
  },
};
