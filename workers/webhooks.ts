import { config } from '../src/config.js';
import { applicationName } from '../src/lib/db.js';
import { logger } from '../src/lib/logger.js';
import { listen, type Listener } from '../src/lib/pg-listen.js';
import { createDeliveryPath } from '../src/runtime.js';
import { DELIVERIES_CHANNEL } from '../src/webhooks/webhook-delivery.repository.js';
import { webhooksProcessors } from './processors/webhooks.processor.js';
import { runWorker } from './run-worker.js';

/**
 * The `webhooks` worker process: the dispatcher (signed deliveries claimed from Postgres, with
 * retries), and the queue's jobs (support retries, failed deliveries shown in the dashboard,
 * endpoint recovery).
 */
let delivery: ReturnType<typeof createDeliveryPath> | null = null;
let listener: Listener | null = null;

runWorker({
  queue: 'webhooks',
  // Fails fast while Redis is away: delivering needs no Redis; metrics and dashboard jobs wait for it.
  redis: 'command',
  processors: (runtime) => {
    delivery = createDeliveryPath(runtime);
    return webhooksProcessors(runtime, delivery.dispatcher);
  },
  concurrency: 10,
  options: { lockDuration: Math.max(30_000, config.webhook.timeoutMs * 3), stalledInterval: 5_000 },
  onStart: async () => {
    const { dispatcher } = delivery!;
    // Woken by the relay's NOTIFY; polls besides, so a missed notification costs at most a poll.
    listener = await listen(config.databaseUrl, DELIVERIES_CHANNEL, (payload) => dispatcher.notified(payload), { onReconnect: () => dispatcher.wake(), applicationName });
    dispatcher.start();
  },
  onStop: async () => {
    await delivery?.close();
    await listener?.close();
  },
}).catch((err) => {
  logger.fatal({ err }, 'the webhooks worker could not start');
  process.exit(1);
});
