import { ROLLUP_EVERY_MS, usageProcessors } from './processors/usage.processor.js';
import { runWorker } from './run-worker.js';

/** The `usage` worker process: the hourly usage rollup behind GET /v1/tenants/{id}/usage. */
runWorker({
  // One at a time: concurrent rollups would only redo the same work (they serialize on a lock).
  queue: { name: 'usage', concurrency: 1, schedules: [{ id: 'rollup', every: ROLLUP_EVERY_MS }] },
  setup: (runtime) => ({ processors: usageProcessors(runtime) }),
});
