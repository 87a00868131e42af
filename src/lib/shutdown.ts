import { logger } from './logger.js';
import { flushTracing } from './telemetry.js';

/** Runs `stop` once on SIGTERM/SIGINT, then exits 0, or 1 on failure or after `graceMs` (platforms SIGKILL at 30 s). */
export function onShutdown(name: string, stop: () => Promise<void>, graceMs = 25_000): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${name}: finishing in-flight work before exit`);
    const timer = setTimeout(() => {
      logger.error(`${name}: still busy after ${graceMs} ms; exiting anyway`);
      process.exit(1);
    }, graceMs);
    timer.unref();
    // The spans of the last work done are exported before the process goes.
    stop()
      .then(flushTracing)
      .then(
        () => {
          logger.info(`${name}: stopped cleanly`);
          process.exit(0);
        },
        (err) => {
          logger.error({ err }, `${name}: error while stopping`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
