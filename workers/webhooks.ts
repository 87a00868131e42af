import { config } from '../src/config.js';
import { createPool } from '../src/lib/db.js';
import { logger } from '../src/lib/logger.js';
import { WebhookMetrics } from '../src/lib/metrics.js';
import { listen, type Listener } from '../src/lib/pg-listen.js';
import { createQueue } from '../src/lib/queues.js';
import { createRedis } from '../src/lib/redis.js';
import { DeliverySender } from '../src/webhooks/delivery-send.js';
import { Dispatcher } from '../src/webhooks/dispatcher.js';
import { DELIVERIES_CHANNEL } from '../src/webhooks/relay.js';
import { WebhookDeliveryRepository } from '../src/webhooks/webhook-delivery.repository.js';
import { WebhookJobs } from '../src/webhooks/webhook.jobs.js';
import { applicationName } from '../src/lib/db.js';
import { webhooksProcessors } from './processors/webhooks.processor.js';
import { runWorker } from './run-worker.js';

/**
 * The `webhooks` worker process: the dispatcher (signed deliveries claimed from Postgres, with
 * retries), and the queue's jobs (support retries, failed deliveries shown in the dashboard,
 * endpoint recovery).
 */
// Fails fast while Redis is away: delivering needs no Redis; metrics and dashboard jobs wait for it.
const redis = createRedis('command');
const jobs = new WebhookJobs(createQueue('webhooks', redis));
const { webhook } = config;
// One connection per claim or record in flight at a time, and one for a support retry.
const pool = createPool(4);
const metrics = new WebhookMetrics(redis);
const dispatcher = new Dispatcher(
  new WebhookDeliveryRepository(pool),
  new DeliverySender({ timeoutMs: webhook.timeoutMs, allowPrivateNetworks: webhook.allowPrivateNetworks }),
  metrics,
  {
    concurrency: config.webhooksWorkerConcurrency,
    endpointConcurrency: config.webhookEndpointConcurrency,
    // A claimed delivery may wait for one attempt of its lane, then make its own.
    leaseSeconds: Math.ceil((2 * webhook.timeoutMs) / 1000) + 10,
    pollMs: 500,
    disableAfterHours: webhook.disableAfterHours,
    retentionDays: webhook.retentionDays,
    policy: { maxAttempts: webhook.maxAttempts, backoffBaseMs: webhook.backoffBaseMs, timeoutMs: webhook.timeoutMs },
  },
  { onFailed: (reports) => jobs.showFailed(reports) },
);
let listener: Listener | null = null;

runWorker({
  queue: 'webhooks',
  processors: webhooksProcessors(jobs, dispatcher),
  concurrency: 10,
  options: { lockDuration: Math.max(30_000, webhook.timeoutMs * 3), stalledInterval: 5_000 },
  onStart: async () => {
    // Woken by the relay's NOTIFY; polls besides, so a missed notification costs at most a poll.
    listener = await listen(config.databaseUrl, DELIVERIES_CHANNEL, (payload) => dispatcher.notified(payload), { onReconnect: () => dispatcher.wake(), applicationName });
    dispatcher.start();
  },
  onStop: async () => {
    await dispatcher.stop();
    await listener?.close();
    await metrics.flush();
    await pool.end();
    await jobs.queue.close();
    redis.disconnect();
  },
}).catch((err) => {
  logger.fatal({ err }, 'the webhooks worker could not start');
  process.exit(1);
});
