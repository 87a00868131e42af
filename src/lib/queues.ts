import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { config } from '../config.js';
import { logger } from './logger.js';
import { isReportedRedisError } from './redis.js';

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

/** The BullMQ key prefix: a Redis hash tag, so BullMQ runs unchanged on Redis Cluster. */
export const queuePrefix = (): string => config.redisPrefix;

const defaultJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** A producer for `name` over an existing connection (job payloads are plain JSON: ids only). */
export function createQueue<Q extends QueueName>(name: Q, connection: Redis | ConnectionOptions): Queue {
  const queue = new Queue(name, { connection, prefix: queuePrefix(), defaultJobOptions });
  // A queue re-emits its connection's errors; with no listener BullMQ prints each one's stack
  // to stderr (every reconnection attempt while Redis is away). The connection logs those.
  queue.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.warn({ err, queue: name }, 'queue error');
  });
  return queue;
}
