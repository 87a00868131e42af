import { Queue } from 'bullmq';
import { QUEUES, type QueueName } from '../../src/jobs.js';
import { queuePrefix } from '../../src/lib/queues.js';
import { createRedis, waitForRedis } from '../../src/lib/redis.js';
import type { RedisTarget } from '../../src/config.js';

/** The job schedulers each queue must have: each exactly once, whatever ran or restarted. */
export const SCHEDULERS: Record<QueueName, string[]> = {
  maintenance: ['history-partitions', 'purge-expired', 'table-upkeep'],
  calls: ['sweep'],
  tenants: ['sweep'],
  usage: ['rollup'],
  // Retention, once its hourly `purge`, is the maintenance worker's `history-partitions`.
  webhooks: [],
};

/** Every queue's job scheduler ids (sorted, duplicates kept) in the Redis (server or cluster) at `target`. */
export async function schedulersIn(target: RedisTarget): Promise<Record<string, string[]>> {
  const client = createRedis('command', target);
  await waitForRedis(client, 5000);
  const queues = (Object.keys(QUEUES) as QueueName[]).map((name) => new Queue(name, { connection: client, prefix: queuePrefix(name) }));
  try {
    return Object.fromEntries(await Promise.all(queues.map(async (q) => [q.name, (await q.getJobSchedulers()).map((s) => s.key).sort()])));
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    client.disconnect();
  }
}
