import { Queue, type BulkJobOptions, type Job, type JobsOptions } from 'bullmq';
import { logger } from './logger.js';
import { isReportedRedisError, redisKey, type RedisClient } from './redis.js';
import { queueTelemetry } from './telemetry.js';

/** Job name → payload (src/jobs.ts gives one per queue). */
export type JobMap = object;
export type TypedJob<M extends JobMap, N extends keyof M & string> = Job<M[N], unknown, N>;

/** `<REDIS_PREFIX>:queue:{<queue>}`: a hash tag per queue, so BullMQ's scripts find its keys in one cluster slot. */
export const queuePrefix = (name: string): string => redisKey('queue', name);

const defaultJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

export type BulkJob<M extends JobMap> = { [N in keyof M & string]: { name: N; data: M[N]; opts?: BulkJobOptions } }[keyof M & string];

/** A typed producer: only the queue's job names, each with its payload. */
export class JobQueue<M extends JobMap> {
  constructor(
    readonly name: string,
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

/** A typed producer over an existing connection. */
export function createQueue<M extends JobMap>(name: string, connection: RedisClient): JobQueue<M> {
  const queue = new Queue(name, { connection, prefix: queuePrefix(name), defaultJobOptions, telemetry: queueTelemetry() });
  // Without a listener BullMQ prints every re-emitted connection error to stderr; the connection logs those already.
  queue.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.warn({ err, queue: name }, 'queue error');
  });
  return new JobQueue<M>(name, queue);
}
