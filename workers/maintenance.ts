import { maintenanceProcessors } from './processors/maintenance.processor.js';
import { runWorker } from './run-worker.js';

/** The `maintenance` worker process. */
runWorker({
  queue: {
    name: 'maintenance',
    concurrency: 1,
    schedules: [
      { id: 'purge-expired', every: 3_600_000 },
      { id: 'history-partitions', every: 3_600_000 },
      { id: 'table-upkeep', every: 60_000 },
    ],
  },
  setup: (runtime) => ({ processors: maintenanceProcessors(runtime) }),
});
