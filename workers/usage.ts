import { ROLLUP_EVERY_MS, usageProcessors } from './processors/usage.processor.js';
import { runWorker } from './run-worker.js';

/** The `usage` worker process. */
runWorker({
  // One at a time: concurrent rollups would only redo the same work.
  queue: { name: 'usage', concurrency: 1, schedules: [{ id: 'rollup', every: ROLLUP_EVERY_MS }] },
  setup: (runtime) => ({ processors: usageProcessors(runtime) }),
});
