import cluster, { type Worker } from 'node:cluster';
import { logger } from '../lib/logger.js';
import { serveWorkersMetrics } from '../lib/metrics.js';

export interface WebClusterOptions {
  /** The first wait before replacing a worker that died; doubled for each one that dies within `stableMs` of listening. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  stableMs?: number;
  /** How long a stop may take before the workers left are SIGKILLed (theirs is 25 s; platforms SIGKILL at 30 s). */
  graceMs?: number;
}

/** One of the `WEB_CONCURRENCY` places: the worker in it, if any, and how soon it is refilled. */
interface Slot {
  worker: Worker | null;
  listenedAt: number | null;
  nextDelayMs: number;
}

/**
 * Runs this process as the primary of `workers` API processes (node:cluster) sharing `PORT`: each
 * runs the same entry, so each opens its own pool and Redis connections; the primary opens none.
 * A worker that dies is replaced after a backoff, except during the start, when one that cannot
 * start stops them all (exit 1, as a single process that cannot start). SIGTERM and SIGINT are
 * passed on; the primary exits once every worker has, 0 when each stopped cleanly.
 */
export function runWebCluster(workers: number, options: WebClusterOptions = {}): void {
  const { restartDelayMs = 200, maxRestartDelayMs = 10_000, stableMs = 30_000, graceMs = 27_000 } = options;
  const slots: Slot[] = Array.from({ length: workers }, () => ({ worker: null, listenedAt: null, nextDelayMs: restartDelayMs }));
  let started = false;
  let stopping = false;
  let exitCode = 0;

  const alive = () => slots.filter((slot) => slot.worker !== null).map((slot) => slot.worker!);
  const exitOnceAllGone = () => {
    if (alive().length > 0) return;
    logger.info({ exitCode }, 'web: every API process has exited');
    process.exit(exitCode);
  };

  const stop = (signal: NodeJS.Signals, code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = Math.max(exitCode, code);
    logger.info({ signal, workers: alive().length }, 'web: passing the signal on to the API processes; exiting once they have');
    for (const worker of alive()) worker.process.kill(signal);
    setTimeout(() => {
      logger.error({ workerPids: alive().map((w) => w.process.pid) }, `web: API processes still running after ${graceMs} ms; killing them`);
      for (const worker of alive()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, graceMs).unref();
    exitOnceAllGone();
  };

  const fork = (slot: Slot) => {
    const worker = cluster.fork();
    slot.worker = worker;
    slot.listenedAt = null;
    // A failed send or kill; unheard, it would end the primary.
    worker.on('error', (err) => logger.warn({ err, workerPid: worker.process.pid }, 'web: an API process could not be reached'));
    worker.once('listening', () => {
      slot.listenedAt = Date.now();
      if (!started && slots.every((s) => s.listenedAt !== null)) {
        started = true;
        logger.info({ workers }, 'web: every API process listening');
      }
    });
    worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      slot.worker = null;
      const workerPid = worker.process.pid;
      if (stopping) {
        if (code !== 0) exitCode = 1;
        exitOnceAllGone();
      } else if (!started) {
        logger.error({ workerPid, code, signal }, 'web: an API process exited while starting; stopping the others');
        stop('SIGTERM', 1);
      } else {
        // The wait grows only while a place's workers keep dying soon after they start (or never start).
        const stable = slot.listenedAt !== null && Date.now() - slot.listenedAt >= stableMs;
        const delayMs = stable ? restartDelayMs : slot.nextDelayMs;
        slot.nextDelayMs = Math.min(delayMs * 2, maxRestartDelayMs);
        logger.error({ workerPid, code, signal, restartInMs: delayMs }, 'web: an API process exited unexpectedly; replacing it');
        setTimeout(() => {
          if (!stopping) fork(slot);
        }, delayMs);
      }
    });
  };

  serveWorkersMetrics();
  process.on('SIGTERM', () => stop('SIGTERM', 0));
  process.on('SIGINT', () => stop('SIGINT', 0));
  logger.info({ workers }, `web: starting ${workers} API processes`);
  for (const slot of slots) fork(slot);
}
