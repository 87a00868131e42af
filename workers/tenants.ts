import { logger } from '../src/lib/logger.js';
import { tenantsProcessors } from './processors/tenants.processor.js';
import { runWorker } from './run-worker.js';

/** The `tenants` worker process: side effects of disabling a tenant. */
runWorker({
  queue: 'tenants',
  processors: tenantsProcessors,
  concurrency: 4,
  options: { lockDuration: 30_000 },
  schedules: [{ id: 'sweep', every: 30_000 }],
}).catch((err) => {
  logger.fatal({ err }, 'the tenants worker could not start');
  process.exit(1);
});
