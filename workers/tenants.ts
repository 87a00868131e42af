import { tenantsProcessors } from './processors/tenants.processor.js';
import { runWorker } from './run-worker.js';

/** The `tenants` worker process. */
runWorker({
  queue: { name: 'tenants', concurrency: 4, options: { lockDuration: 30_000 }, schedules: [{ id: 'sweep', every: 30_000 }] },
  setup: (runtime) => ({ processors: tenantsProcessors(runtime) }),
});
