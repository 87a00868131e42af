import { Queue, type BulkJobOptions, type Job, type JobsOptions } from 'bullmq';
import { logger } from './logger.js';
import { isReportedRedisError, redisKey, type RedisClient } from './redis.js';

/** A queue's job names and the payload of each (the table in src/jobs.ts gives one per queue). */
export type JobMap = object;
/** A job named `N` of a queue whose payloads are `M`, as its processor receives it. */
export type TypedJob<M extends JobMap, N extends keyof M & string> = Job<M[N], unknown, N>;

/**
 * The BullMQ key prefix of a queue: its own hash tag (`<REDIS_PREFIX>:queue:{<queue>}`), so that all
 * of a queue's keys, which BullMQ's scripts use together, share a cluster slot, and the queues
 * spread over the masters (BullMQ's Redis Cluster pattern: a prefix per queue).
 */
export const queuePrefix = (name: string): string => redisKey('queue', name);

const defaultJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** A job to add in bulk: its name, its payload for that name, its options. */
export type BulkJob<M extends JobMap> = { [N in keyof M & string]: { name: N; data: M[N]; opts?: BulkJobOptions } }[keyof M & string];

/** A typed producer of a queue: only its job names, each with its own payload. */
export class JobQueue<M extends JobMap> {
  constructor(
    readonly name: string,
    /** The BullMQ queue (the dashboard, the metrics, inspection). */
    readonly queue: Queue,
  ) {}

  add<N extends keyof M & string>(name: N, data: M[N], opts?: JobsOptions): Promise<Job> {
    return this.queue.add(name, data, opts);
  }

  addBulk(jobs: Array<BulkJob<M>>): Promise<Job[]> {
    return this.queue.addBulk(jobs);
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** A producer for `name` over an existing connection (job payloads are plain JSON: ids only). */
export function createQueue<M extends JobMap>(name: string, connection: RedisClient): JobQueue<M> {
  const queue = new Queue(name, { connection, prefix: queuePrefix(name), defaultJobOptions });
  // A queue re-emits its connection's errors; with no listener BullMQ prints each one's stack
  // to stderr (every reconnection attempt while Redis is away). The connection logs those.
  queue.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.warn({ err, queue: name }, 'queue error');
  });
  return new JobQueue<M>(name, queue);
}
