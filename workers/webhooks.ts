import { config } from '../src/config.js';
import { logger } from '../src/lib/logger.js';
import { createQueue } from '../src/lib/queues.js';
import { createRedis } from '../src/lib/redis.js';
import { WebhookJobs } from '../src/webhooks/webhook.jobs.js';
import { webhooksProcessors } from './processors/webhooks.processor.js';
import { runWorker } from './run-worker.js';

/** The `webhooks` worker process: signed deliveries with retries, the sweeper, retention. */
const redis = createRedis('blocking');
const queue = createQueue('webhooks', redis);
const jobs = new WebhookJobs(queue, redis);

runWorker({
  queue: 'webhooks',
  processors: webhooksProcessors(jobs),
  concurrency: config.webhooksWorkerConcurrency,
  // A job whose process died is found by the stalled check once its lock expires; checking
  // every 5 s (not BullMQ's 30 s) gets a killed worker's in-flight deliveries going again
  // within the lock's duration plus ~10 s instead of about a minute. The check only moves
  // jobs whose lock is gone, so a live worker's jobs are never taken.
  options: { lockDuration: Math.max(30_000, config.webhook.timeoutMs * 3), stalledInterval: 5_000 },
  // The sweeper queues again every delivery whose job was lost (e.g. with an emptied Redis).
  schedules: [
    { id: 'sweep', every: 10_000 },
    { id: 'purge', every: 3_600_000 },
  ],
  onStop: async () => {
    await queue.close();
    redis.disconnect();
  },
}).catch((err) => {
  logger.fatal({ err }, 'the webhooks worker could not start');
  process.exit(1);
});
