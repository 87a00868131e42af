import { logger } from '../src/lib/logger.js';
import { createQueue } from '../src/lib/queues.js';
import { createRedis } from '../src/lib/redis.js';
import { scheduleUsageRollup, usageProcessors } from './processors/usage.processor.js';
import { runWorker } from './run-worker.js';

/** The `usage` worker process: the hourly usage rollup behind GET /v1/tenants/{id}/usage. */
runWorker({
  queue: 'usage',
  processors: usageProcessors,
  // One at a time: concurrent rollups would only redo the same work (they serialize on a lock).
  concurrency: 1,
  onStart: async () => {
    const redis = createRedis('blocking');
    const queue = createQueue('usage', redis);
    await scheduleUsageRollup(queue);
    await queue.close();
    redis.disconnect();
  },
}).catch((err) => {
  logger.fatal({ err }, 'the usage worker could not start');
  process.exit(1);
});
