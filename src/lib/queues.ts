import { Queue, type JobsOptions } from 'bullmq';
import { logger } from './logger.js';
import { isReportedRedisError, redisKey, type RedisClient } from './redis.js';

/**
 * Every BullMQ queue of the service, the jobs each carries, and their default options.
 * Job names are a contract between producers and processors: each worker asserts at boot
 * that it handles every job name of its queues (see workers/run-worker.ts).
 */
export const QUEUES = {
  maintenance: ['purge-expired', 'history-partitions'],
  calls: ['dispatch', 'dial', 'report', 'sweep', 'campaign-tick'],
  tenants: ['apply-state', 'sweep'],
  usage: ['rollup'],
  webhooks: ['deliver', 'recover'],
} as const;

export type QueueName = keyof typeof QUEUES;
export type JobName<Q extends QueueName> = (typeof QUEUES)[Q][number];

/**
 * The BullMQ key prefix of a queue: its own hash tag (`<REDIS_PREFIX>:queue:{<queue>}`), so that all
 * of a queue's keys, which BullMQ's scripts use together, share a cluster slot, and the queues
 * spread over the masters (BullMQ's Redis Cluster pattern: a prefix per queue).
 */
export const queuePrefix = (name: QueueName): string => redisKey('queue', name);

const defaultJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** A producer for `name` over an existing connection (job payloads are plain JSON: ids only). */
export function createQueue<Q extends QueueName>(name: Q, connection: RedisClient): Queue {
  const queue = new Queue(name, { connection, prefix: queuePrefix(name), defaultJobOptions });
  // A queue re-emits its connection's errors; with no listener BullMQ prints each one's stack
  // to stderr (every reconnection attempt while Redis is away). The connection logs those.
  queue.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.warn({ err, queue: name }, 'queue error');
  });
  return queue;
}
