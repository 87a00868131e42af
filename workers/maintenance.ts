import { createQueue } from '../src/lib/queues.js';
import { createRedis } from '../src/lib/redis.js';
import { logger } from '../src/lib/logger.js';
import { maintenanceProcessors, scheduleMaintenance } from './processors/maintenance.processor.js';
import { runWorker } from './run-worker.js';

/** The `maintenance` worker process: scheduled purges. */
runWorker({
  queue: 'maintenance',
  processors: maintenanceProcessors,
  concurrency: 1,
  onStart: async () => {
    const redis = createRedis('blocking');
    const queue = createQueue('maintenance', redis);
    await scheduleMaintenance(queue);
    await queue.close();
    redis.disconnect();
  },
}).catch((err) => {
  logger.fatal({ err }, 'the maintenance worker could not start');
  process.exit(1);
});
