import { expect } from 'chai';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { config } from '../../src/config.js';
import { db } from '../helpers/db.js';
import { createQueue } from '../../src/jobs.js';
import { scanKeys } from '../../src/lib/redis.js';
import { redisForTests } from '../helpers/redis.js';
import { SerialClient } from '../helpers/serial-pg.js';

describe('schema and queues', () => {
  it('the migrations produce exactly the schema the entities describe', async () => {
    // TypeORM cannot describe partitioning: for the partitioned history tables it compares what
    // it can (the partitioned tables' columns, primary keys, indexes and foreign keys); the
    // next test checks the partitioning itself. The schema reader's queries go through a
    // client that runs them in turn (see SerialClient).
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

  it('the history tables are partitioned by range of their event’s created_at, with a default partition and a partition per UTC day a week ahead', async () => {
    const tables = await db.query(
      `SELECT c.relname AS table, p.partstrat AS strategy, a.attname AS key, d.relname AS fallback
         FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
         JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
         LEFT JOIN pg_class d ON d.oid = p.partdefid
        ORDER BY 1`,
    );
    expect(tables).to.deep.equal([
      { table: 'call_events', strategy: 'r', key: 'created_at', fallback: 'call_events_default' },
      { table: 'webhook_attempts', strategy: 'r', key: 'delivery_created_at', fallback: 'webhook_attempts_default' },
      { table: 'webhook_deliveries', strategy: 'r', key: 'created_at', fallback: 'webhook_deliveries_default' },
    ]);
    const day = 86_400_000;
    const today = Math.floor(Date.now() / day) * day;
    for (const { table } of tables) {
      for (let t = today; t <= today + 7 * day; t += day) {
        const from = new Date(t).toISOString().slice(0, 10);
        const to = new Date(t + day).toISOString().slice(0, 10);
        const [bound] = await db.transaction(async (em) => {
          await em.query(`SET LOCAL TIME ZONE 'UTC'`);
          return em.query(`SELECT pg_get_expr(relpartbound, oid) AS bound FROM pg_class WHERE relname = $1 AND relispartition`, [
            `${table}_p${from.replaceAll('-', '')}`,
          ]);
        });
        expect(bound?.bound, `${table} on ${from}`).to.equal(`FOR VALUES FROM ('${from} 00:00:00+00') TO ('${to} 00:00:00+00')`);
      }
    }
  });

  it('every key of a queue lives under its own hash tag (one Redis Cluster slot per queue)', async () => {
    const { queue } = createQueue('maintenance', redisForTests());
    await queue.add('purge-expired', {}, { delay: 60_000 });
    const keys = await scanKeys(redisForTests(), `${config.redisPrefix}:*:maintenance:*`);
    expect(keys).to.not.be.empty;
    for (const key of keys) expect(key.startsWith(`${config.redisPrefix}:queue:{maintenance}:maintenance:`), key).to.equal(true);
    await queue.obliterate({ force: true });
    await queue.close();
  });
});
