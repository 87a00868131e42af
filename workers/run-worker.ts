import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { db } from '../src/lib/db.js';
import { logger } from '../src/lib/logger.js';
import { queuePrefix, QUEUES, type JobName, type QueueName } from '../src/lib/queues.js';
import { createRedis } from '../src/lib/redis.js';
import { onShutdown } from '../src/lib/shutdown.js';

/** What a job of each name does. Processors throw to have BullMQ retry; they never swallow errors. */
export type Processors<Q extends QueueName> = { [N in JobName<Q>]: (job: Job, token?: string) => Promise<unknown> };

export interface WorkerSpec<Q extends QueueName> {
  queue: Q;
  processors: Processors<Q>;
  concurrency: number;
  options?: Partial<WorkerOptions>;
  /** Runs once the worker is up (e.g. upserting its job schedulers). */
  onStart?: () => Promise<void>;
  /** Runs after the worker closed (e.g. closing connections the processors opened). */
  onStop?: () => Promise<void>;
}

/**
 * Starts one worker process: a database connection, a BullMQ worker over a blocking Redis
 * connection, and a shutdown that lets in-flight jobs finish on SIGTERM.
 */
export async function runWorker<Q extends QueueName>(spec: WorkerSpec<Q>): Promise<void> {
  const handled = Object.keys(spec.processors).sort();
  const declared = [...QUEUES[spec.queue]].sort();
  if (JSON.stringify(handled) !== JSON.stringify(declared)) {
    throw new Error(`queue ${spec.queue}: job names ${declared.join(', ')} but processors for ${handled.join(', ')}`);
  }
  await db.initialize();
  const connection = createRedis('blocking');
  const worker = new Worker(
    spec.queue,
    async (job, token) => {
      const process = spec.processors[job.name as JobName<Q>];
      if (!process) throw new Error(`no processor for job ${job.name}`);
      return process(job, token);
    },
    { connection, prefix: queuePrefix(), concurrency: spec.concurrency, ...spec.options },
  );
  worker.on('failed', (job, err) => logger.warn({ err, jobId: job?.id, job: job?.name }, `${spec.queue} job failed`));
  worker.on('error', (err) => logger.error({ err }, `${spec.queue} worker error`));
  // Registered before anything else can take time, so an early SIGTERM still closes cleanly.
  onShutdown(`${spec.queue} worker`, async () => {
    await worker.close();
    await spec.onStop?.();
    await db.destroy();
    connection.disconnect();
  });
  await spec.onStart?.();
  logger.info({ queue: spec.queue, concurrency: spec.concurrency }, 'worker started');
}
