import { Queue, type BulkJobOptions, type Job, type JobsOptions } from 'bullmq';
import type { CampaignTickJob, DialJob, DispatchJob, ReportJob, SendTextJob } from '../calls/calls.jobs.js';
import type { ApplyStateJob } from '../tenants/tenants.jobs.js';
import type { DeliverJob, RecoverJob } from '../webhooks/webhook.jobs.js';
import { logger } from './logger.js';
import { isReportedRedisError, redisKey, type RedisClient } from './redis.js';

/** The payload of a job that carries none (a scheduled sweep). */
export type NoPayload = Record<string, never>;

/**
 * The one table of jobs: each queue, the job names it carries, and the payload of each. Producers
 * and processors are typed from it, so a processor cannot read a field its producer never sends.
 * Payloads are plain JSON, ids and times as strings. Job names are a contract between producers
 * and processors: each worker asserts at boot that it handles exactly its queue's names.
 */
export interface Jobs {
  maintenance: { 'purge-expired': NoPayload; 'history-partitions': NoPayload };
  calls: { dispatch: DispatchJob; dial: DialJob; report: ReportJob; sweep: NoPayload; 'campaign-tick': CampaignTickJob; 'send-text': SendTextJob };
  tenants: { 'apply-state': ApplyStateJob; sweep: NoPayload };
  usage: { rollup: NoPayload };
  webhooks: { deliver: DeliverJob; recover: RecoverJob };
}

export type QueueName = keyof Jobs;
export type JobName<Q extends QueueName> = keyof Jobs[Q] & string;
export type JobData<Q extends QueueName, N extends JobName<Q>> = Jobs[Q][N];
/** A job of queue `Q` named `N`, as its processor receives it. */
export type JobOf<Q extends QueueName, N extends JobName<Q>> = Job<JobData<Q, N>, unknown, N>;

/** The job names of each queue, at run time (the boot check, the dashboard, the metrics). */
export const QUEUES: { readonly [Q in QueueName]: ReadonlyArray<JobName<Q>> } = {
  maintenance: ['purge-expired', 'history-partitions'],
  calls: ['dispatch', 'dial', 'report', 'sweep', 'campaign-tick', 'send-text'],
  tenants: ['apply-state', 'sweep'],
  usage: ['rollup'],
  webhooks: ['deliver', 'recover'],
};

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

/** A job to add in bulk: its name, its payload for that name, its options. */
export type BulkJob<Q extends QueueName> = { [N in JobName<Q>]: { name: N; data: JobData<Q, N>; opts?: BulkJobOptions } }[JobName<Q>];

/** A typed producer of queue `Q`: only its job names, each with its own payload. */
export class JobQueue<Q extends QueueName> {
  constructor(
    readonly name: Q,
    /** The BullMQ queue (the dashboard, the metrics, inspection). */
    readonly queue: Queue,
  ) {}

  add<N extends JobName<Q>>(name: N, data: JobData<Q, N>, opts?: JobsOptions): Promise<Job> {
    return this.queue.add(name, data, opts);
  }

  addBulk(jobs: Array<BulkJob<Q>>): Promise<Job[]> {
    return this.queue.addBulk(jobs);
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** A producer for `name` over an existing connection (job payloads are plain JSON: ids only). */
export function createQueue<Q extends QueueName>(name: Q, connection: RedisClient): JobQueue<Q> {
  const queue = new Queue(name, { connection, prefix: queuePrefix(name), defaultJobOptions });
  // A queue re-emits its connection's errors; with no listener BullMQ prints each one's stack
  // to stderr (every reconnection attempt while Redis is away). The connection logs those.
  queue.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.warn({ err, queue: name }, 'queue error');
  });
  return new JobQueue(name, queue);
}
