import { Worker, type Queue, type WorkerOptions } from 'bullmq';
import type { DataSource } from 'typeorm';
import { createQueue, QUEUES, type JobName, type Processors, type QueueName } from '../src/jobs.js';
import { lowerCpuPriority } from '../src/lib/cpu-priority.js';
import { logger } from '../src/lib/logger.js';
import { queuePrefix } from '../src/lib/queues.js';
import { createRedis, isReportedRedisError, onReady, type ConnectionKind } from '../src/lib/redis.js';
import { onShutdown } from '../src/lib/shutdown.js';
import { createRuntime, openDatabase, type Runtime } from '../src/runtime.js';

/** A job scheduler of the worker's queue: a job `name` (default: the id) every `every` ms. */
export type Schedule<Q extends QueueName> = { id: JobName<Q>; every: number } | { id: string; every: number; name: JobName<Q> };

/** What a worker process runs besides BullMQ: started once its worker is up, stopped after it closed. */
export interface Loop {
  start(): Promise<void> | void;
  stop(): Promise<void>;
}

/** What a worker process is made of, built from its runtime: its queue's processors, and its loop if it has one. */
export interface WorkerParts<Q extends QueueName> {
  processors: Processors<Q>;
  loop?: Loop;
}

/** The BullMQ queue a worker process serves. */
export interface QueueSpec<Q extends QueueName> {
  name: Q;
  concurrency: number;
  options?: Partial<WorkerOptions>;
  /**
   * The queue's job schedulers. They live in Redis, and a Redis that comes back empty
   * (restarted without persistence, failed over) has lost them: they are upserted at start and
   * again every time the worker's connection is ready.
   */
  schedules?: Schedule<Q>[];
}

/** A worker process that serves a BullMQ queue (and may run a loop besides). */
export interface QueueWorkerSpec<Q extends QueueName> {
  queue: QueueSpec<Q>;
  /**
   * The runtime's Redis connection for commands and producers: `blocking` (the default) waits
   * for Redis while it is away; `command` fails fast (a process whose work needs no Redis).
   */
  redis?: ConnectionKind;
  /** CPU niceness the process gives itself at start (see lowerCpuPriority). */
  nice?: number;
  setup: (runtime: Runtime) => WorkerParts<Q>;
}

/** A worker process that runs a loop of its own over the database alone, with no Redis (the relay). */
export interface LoopWorkerSpec {
  name: string;
  setup: (db: DataSource) => Loop;
}

/**
 * Runs one worker process, every kind the same way: its runtime, its BullMQ worker and job
 * schedulers (or its loop), and a shutdown on SIGTERM that lets in-flight work finish. It logs
 * `worker started` once it serves; a failure to start is fatal.
 */
export function runWorker<Q extends QueueName>(spec: QueueWorkerSpec<Q>): void;
export function runWorker(spec: LoopWorkerSpec): void;
export function runWorker<Q extends QueueName>(spec: QueueWorkerSpec<Q> | LoopWorkerSpec): void {
  const name = 'queue' in spec ? spec.queue.name : spec.name;
  start(spec).catch((err) => {
    logger.fatal({ err }, `the ${name} worker could not start`);
    process.exit(1);
  });
}

async function start<Q extends QueueName>(spec: QueueWorkerSpec<Q> | LoopWorkerSpec): Promise<void> {
  const db = openDatabase();
  if (!('queue' in spec)) {
    const loop = spec.setup(db);
    // Registered before anything else can take time, so an early SIGTERM still closes cleanly.
    onShutdown(`${spec.name} worker`, async () => {
      await loop.stop();
      if (db.isInitialized) await db.destroy();
    });
    await db.initialize();
    await loop.start();
    logger.info({ worker: spec.name }, 'worker started');
    return;
  }

  const { queue } = spec;
  if (spec.nice !== undefined) lowerCpuPriority(spec.nice);
  const redis = createRedis(spec.redis ?? 'blocking');
  const runtime = createRuntime({ db, redis });
  const { processors, loop } = spec.setup(runtime);
  const handled = Object.keys(processors).sort();
  const declared = [...QUEUES[queue.name]].sort();
  if (JSON.stringify(handled) !== JSON.stringify(declared)) {
    throw new Error(`queue ${queue.name}: job names ${declared.join(', ')} but processors for ${handled.join(', ')}`);
  }
  await db.initialize();
  const connection = createRedis('blocking');
  const worker = new Worker(
    queue.name,
    (job, token) => {
      const process = processors[job.name as JobName<Q>] as ((job: unknown, token?: string) => Promise<unknown>) | undefined;
      if (!process) throw new Error(`no processor for job ${job.name}`);
      return process(job, token);
    },
    { connection, prefix: queuePrefix(queue.name), concurrency: queue.concurrency, ...queue.options },
  );
  worker.on('failed', (job, err) => logger.warn({ err, jobId: job?.id, job: job?.name }, `${queue.name} job failed`));
  worker.on('error', (err) => {
    if (!isReportedRedisError(err)) logger.error({ err }, `${queue.name} worker error`);
  });
  const schedulers = createQueue(queue.name, connection).queue;
  let closing = false;
  onShutdown(`${queue.name} worker`, async () => {
    closing = true;
    await worker.close();
    await loop?.stop();
    await schedulers.close();
    await runtime.close();
    await db.destroy();
    connection.disconnect();
    redis.disconnect();
  });
  // Every reconnection may be to a Redis that lost everything (on a cluster: every master
  // reached again, see onReady). Upserting is idempotent, so doing it after a mere network blip
  // (or from every process of a kind) changes nothing.
  onReady(connection, () => {
    if (closing) return;
    upsertSchedulers(schedulers, queue).catch((err) => logger.warn({ err, queue: queue.name }, 'could not upsert the job schedulers; the next reconnection tries again'));
  });
  await upsertSchedulers(schedulers, queue);
  await loop?.start();
  logger.info({ queue: queue.name, concurrency: queue.concurrency }, 'worker started');
}

/**
 * Upserts the queue's schedulers and removes any other (one a previous version declared would
 * go on making jobs no processor handles, forever).
 */
async function upsertSchedulers<Q extends QueueName>(schedulers: Queue, queue: QueueSpec<Q>): Promise<void> {
  const declared = new Set<string>((queue.schedules ?? []).map((s) => s.id));
  for (const s of queue.schedules ?? []) await schedulers.upsertJobScheduler(s.id, { every: s.every }, { name: 'name' in s ? s.name : s.id });
  for (const stale of await schedulers.getJobSchedulers()) {
    if (!declared.has(stale.key)) await schedulers.removeJobScheduler(stale.key);
  }
}
