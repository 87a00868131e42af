import { Worker, type WorkerOptions } from 'bullmq';
import { logger } from '../src/lib/logger.js';
import { createQueue, queuePrefix, QUEUES, type JobName, type JobOf, type QueueName } from '../src/lib/queues.js';
import { createRedis, isReportedRedisError, onReady, type ConnectionKind } from '../src/lib/redis.js';
import { onShutdown } from '../src/lib/shutdown.js';
import { createRuntime, openDatabase, type Runtime } from '../src/runtime.js';

/**
 * What a job of each name does, typed by the job table (src/lib/queues.ts): a processor reads
 * only what its producer sends. Processors throw to have BullMQ retry (a permanent failure throws
 * BullMQ's `UnrecoverableError`, which is not retried); they never swallow errors.
 */
export type Processors<Q extends QueueName> = { [N in JobName<Q>]: (job: JobOf<Q, N>, token?: string) => Promise<unknown> };

/** A job scheduler of the worker's queue: a job `name` (default: the id) every `every` ms. */
export type Schedule<Q extends QueueName> = { id: JobName<Q>; every: number } | { id: string; every: number; name: JobName<Q> };

export interface WorkerSpec<Q extends QueueName> {
  queue: Q;
  /** The processors, built from the process's runtime. */
  processors: (runtime: Runtime) => Processors<Q>;
  concurrency: number;
  options?: Partial<WorkerOptions>;
  /**
   * The runtime's Redis connection for commands and producers: `blocking` (the default) waits
   * for Redis while it is away; `command` fails fast (a process whose work needs no Redis).
   */
  redis?: ConnectionKind;
  /**
   * The queue's job schedulers. They live in Redis, and a Redis that comes back empty
   * (restarted without persistence, failed over) has lost them: the runner upserts them at
   * start and again every time its connection is ready, so no worker kind can forget.
   */
  schedules?: Schedule<Q>[];
  /** Runs once the worker is up. */
  onStart?: (runtime: Runtime) => Promise<void>;
  /** Runs after the worker closed (e.g. closing connections the processors opened). */
  onStop?: (runtime: Runtime) => Promise<void>;
}

/**
 * Starts one worker process: its runtime (a database connection and a Redis connection, see
 * `createRuntime`), a BullMQ worker over a blocking Redis connection of its own, its job
 * schedulers, and a shutdown that lets in-flight jobs finish on SIGTERM.
 */
export async function runWorker<Q extends QueueName>(spec: WorkerSpec<Q>): Promise<void> {
  const redis = createRedis(spec.redis ?? 'blocking');
  const db = openDatabase();
  const runtime = createRuntime({ db, redis });
  const processors = spec.processors(runtime);
  const handled = Object.keys(processors).sort();
  const declared = [...QUEUES[spec.queue]].sort();
  if (JSON.stringify(handled) !== JSON.stringify(declared)) {
    throw new Error(`queue ${spec.queue}: job names ${declared.join(', ')} but processors for ${handled.join(', ')}`);
  }
  await db.initialize();
  const connection = createRedis('blocking');
  const worker = new Worker(
    spec.queue,
    async (job, token) => {
      const process = processors[job.name as JobName<Q>] as ((job: unknown, token?: string) => Promise<unknown>) | undefined;
      if (!process) throw new Error(`no processor for job ${job.name}`);
      return process(job, token);
    },
    { connection, prefix: queuePrefix(spec.queue), concurrency: spec.concurrency, ...spec.options },
  );
  worker.on('failed', (job, err) => logger.warn({ err, jobId: job?.id, job: job?.name }, `${spec.queue} job failed`));
  worker.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.error({ err }, `${spec.queue} worker error`);
  });
  const { queue } = createQueue(spec.queue, connection);
  const scheduled = new Set<string>((spec.schedules ?? []).map((s) => s.id));
  // The worker owns its queue's schedulers: it upserts the ones it declares and removes any other
  // (one a previous version declared would go on making jobs no processor handles, forever).
  const schedule = async () => {
    for (const s of spec.schedules ?? []) await queue.upsertJobScheduler(s.id, { every: s.every }, { name: 'name' in s ? s.name : s.id });
    for (const stale of await queue.getJobSchedulers()) {
      if (!scheduled.has(stale.key)) await queue.removeJobScheduler(stale.key);
    }
  };
  let closing = false;
  // Registered before anything else can take time, so an early SIGTERM still closes cleanly.
  onShutdown(`${spec.queue} worker`, async () => {
    closing = true;
    await worker.close();
    await spec.onStop?.(runtime);
    await queue.close();
    await runtime.close();
    await db.destroy();
    connection.disconnect();
    redis.disconnect();
  });
  // Every reconnection may be to a Redis that lost everything (on a cluster: every master
  // reached again, see onReady). Upserting is idempotent, so doing it after a mere network blip
  // (or from every process of a kind) changes nothing.
  function reschedule() {
    if (closing) return;
    schedule().catch((err) => logger.warn({ err, queue: spec.queue }, 'could not upsert the job schedulers; the next reconnection tries again'));
  }
  onReady(connection, reschedule);
  await schedule();
  await spec.onStart?.(runtime);
  logger.info({ queue: spec.queue, concurrency: spec.concurrency }, 'worker started');
}
