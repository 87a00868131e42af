import { expect } from 'chai';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { config } from '../../src/config.js';
import { db } from '../../src/lib/db.js';
import { createQueue } from '../../src/lib/queues.js';
import { scanKeys } from '../../src/lib/redis.js';
import { redisForTests } from '../helpers/redis.js';
import { SerialClient } from '../helpers/serial-pg.js';

describe('schema and queues', () => {
  it('the migrations produce exactly the schema the entities describe', async () => {
    // The schema reader's queries go through a client that runs them in turn (see SerialClient).
    const options = db.options as PostgresDataSourceOptions;
    const reader = new DataSource({ ...options, extra: { ...options.extra, Client: SerialClient } });
    await reader.initialize();
    try {
      const pending = await reader.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).to.deep.equal([]);
    } finally {
      await reader.destroy();
    }
  });

  it('every key of a queue lives under its own hash tag (one Redis Cluster slot per queue)', async () => {
    const queue: Queue = createQueue('maintenance', redisForTests());
    await queue.add('purge-expired', {}, { delay: 60_000 });
    const keys = await scanKeys(redisForTests(), `${config.redisPrefix}:*:maintenance:*`);
    expect(keys).to.not.be.empty;
    for (const key of keys) expect(key.startsWith(`${config.redisPrefix}:queue:{maintenance}:maintenance:`), key).to.equal(true);
    await queue.obliterate({ force: true });
    await queue.close();
  });
});
