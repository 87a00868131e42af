import { expect } from 'chai';
import { Queue } from 'bullmq';
import { config } from '../../src/config.js';
import { db } from '../../src/lib/db.js';
import { createQueue } from '../../src/lib/queues.js';
import { redisForTests } from '../helpers/redis.js';

describe('schema and queues', () => {
  it('the migrations produce exactly the schema the entities describe', async () => {
    const pending = await db.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).to.deep.equal([]);
  });

  it('every queue key lives under the hash-tagged prefix (one Redis Cluster slot)', async () => {
    const queue: Queue = createQueue('maintenance', redisForTests());
    await queue.add('purge-expired', {}, { delay: 60_000 });
    const keys = await redisForTests().keys('*maintenance*');
    const ours = keys.filter((k) => k.includes(config.redisPrefix));
    expect(ours).to.not.be.empty;
    for (const key of ours) expect(key.startsWith(`${config.redisPrefix}:maintenance:`)).to.equal(true);
    expect(config.redisPrefix).to.match(/^\{.+\}$/);
    await queue.obliterate({ force: true });
    await queue.close();
  });
});
