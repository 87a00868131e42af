import './env.js';
import pg from 'pg';
import { config } from '../../src/config.js';
import { db } from '../../src/lib/db.js';
import { ensureDatabase, runMigrations } from '../../src/lib/migrate.js';
import { waitForRedis } from '../../src/lib/redis.js';
import { closeRedisForTests, redisForTests } from './redis.js';

/** Creates this run's database from the migrations, and removes it and its Redis keys afterwards. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await ensureDatabase(config.databaseUrl);
    await runMigrations(config.databaseUrl);
    await db.initialize();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await db.destroy();
    const redis = redisForTests();
    // A run that never used Redis has only just opened the connection (which queues nothing offline).
    await waitForRedis(redis, 5000);
    const keys = await redis.keys(`${config.redisPrefix}*`);
    if (keys.length) await redis.del(...keys);
    await closeRedisForTests();
    const admin = new URL(config.databaseUrl);
    const name = admin.pathname.slice(1);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  },
};
