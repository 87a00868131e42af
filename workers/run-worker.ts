import { Worker, type Queue, type WorkerOptions } from 'bullmq';
import type { DataSource } from 'typeorm';
import { createQueue, QUEUES, type JobName, type Processors, type QueueName } from '../src/jobs.js';
import { lowerCpuPriority } from '../src/lib/cpu-priority.js';
import { logger } from '../src/lib/logger.js';
import { queuePrefix } from '../src/lib/queues.js';
import { createRedis, isReportedRedisError, onReady, type ConnectionKind } from '../src/lib/redis.js';
import { onShutdown } from '../src/lib/shutdown.js';
import { queueTelemetry } from '../src/lib/telemetry.js';
import { createRuntime, openDatabase, type Runtime } from '../src/runtime.js';

/** A job scheduler of the worker's queue: a job `name` (default: the id) every `every` ms. */
export type Schedule<Q extends QueueName> = { id: JobName<Q>; every: number } | { id: string; every: number; name: JobName<Q> };

/** Runs besides BullMQ: started once the worker is up, stopped after it closed. */
export interface Loop {
  start(): Promise<void> | void;
  stop(): Promise<void>;
}

export interface WorkerParts<Q extends QueueName> {
  processors: Processors<Q>;
  loop?: Loop;
}

export interface QueueSpec<Q extends QueueName> {
  name: Q;
  concurrency: number;
  options?: Partial<WorkerOptions>;
  /** Upserted at start and on every reconnection: a Redis that comes back empty has lost them. */
  schedules?: Schedule<Q>[];
}

export interface QueueWorkerSpec<Q extends QueueName> {
  queue: QueueSpec<Q>;
  /** `blocking` (default) waits for Redis while it is away; `command` fails fast (work that needs no Redis). */
  redis?: ConnectionKind;
  /** CPU niceness set at start (see lowerCpuPriority). */
  nice?: number;
  setup: (runtime: Runtime) => WorkerParts<Q>;
}

/** A loop over the database alone, no Redis (the relay). */
export interface LoopWorkerSpec {
  name: string;
  setup: (db: DataSource) => Loop;
}

/**
 * Runs one worker process, every kind through the same lifecycle: built, a SIGTERM handler
 * registered (before anything can take time), the database connected, started, `worker started`
 * logged; on SIGTERM stopped (in-flight work finishes) and the database closed. A failure to
 * start is fatal.
 */
export function runWorker<Q extends QueueName>(spec: QueueWorkerSpec<Q>): void;
export function runWorker(spec: LoopWorkerSpec): void;
export function runWorker<Q extends QueueName>(spec: QueueWorkerSpec<Q> | LoopWorkerSpec): void {
  const name = 'queue' in spec ? spec.queue.name : spec.name;
  const db = openDatabase();
  const run = async () => {
    const running = 'queue' in spec ? queueWorker(spec, db) : spec.setup(db);
    onShutdown(`${name} worker`, async () => {
      await running.stop();
      if (db.isInitialized) await db.destroy();
    });
    await db.initialize();
    await running.start();
    logger.info({ worker: name }, 'worker started');
  };
  run().catch((err) => {
    logger.fatal({ err }, `the ${name} worker could not start`);
    process.exit(1);
  });
}

/**
 * A BullMQ worker of `spec.queue` over the runtime, with its schedulers and its loop, as a Loop:
 * started once the database is connected, so no job runs before.
 */
function queueWorker<Q extends QueueName>(spec: QueueWorkerSpec<Q>, db: DataSource): Loop {
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
  const connection = createRedis('blocking');
  const schedulers = createQueue(queue.name, connection).queue;
  let worker: Worker | null = null;
  let closing = false;
  return {
    async start() {
      worker = new Worker(
        queue.name,
        (job, token) => {
          const process = processors[job.name as JobName<Q>] as ((job: unknown, token?: string) => Promise<unknown>) | undefined;
          if (!process) throw new Error(`no processor for job ${job.name}`);
          return process(job, token);
        },
        { connection, prefix: queuePrefix(queue.name), concurrency: queue.concurrency, telemetry: queueTelemetry(), ...queue.options },
      );
      worker.on('failed', (job, err) => logger.warn({ err, jobId: job?.id, job: job?.name }, `${queue.name} job failed`));
      worker.on('error', (err) => {
        if (!isReportedRedisError(err)) logger.error({ err }, `${queue.name} worker error`);
      });
      // Any reconnection may be to a Redis that lost everything; upserting is idempotent, so a mere blip costs nothing.
      onReady(connection, () => {
        if (closing) return;
        upsertSchedulers(schedulers, queue).catch((err) =>
          logger.warn({ err, queue: queue.name }, 'could not upsert the job schedulers; the next reconnection tries again'),
        );
      });
      await upsertSchedulers(schedulers, queue);
      await loop?.start();
    },
    async stop() {
      closing = true;
      await worker?.close();
      await loop?.stop();
      await schedulers.close();
      await runtime.close();
      connection.disconnect();
      redis.disconnect();
    },
  };
}
/** Upserts the declared schedulers and removes others, which would forever make jobs no processor handles. */
async function upsertSchedulers<Q extends QueueName>(schedulers: Queue, queue: QueueSpec<Q>): Promise<void> {
  const declared = new Set<string>((queue.schedules ?? []).map((s) => s.id));
  for (const s of queue.schedules ?? []) await schedulers.upsertJobScheduler(s.id, { every: s.every }, { name: 'name' in s ? s.name : s.id });
  for (const stale of await schedulers.getJobSchedulers()) {
    if (!declared.has(stale.key)) await schedulers.removeJobScheduler(stale.key);
  }
}
