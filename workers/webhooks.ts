import { config } from '../src/config.js';
import { createDeliveryPath } from '../src/runtime.js';
import { webhooksProcessors } from './processors/webhooks.processor.js';
import { runWorker } from './run-worker.js';

/** The `webhooks` worker process: the dispatcher as its loop, and support's jobs. */
runWorker({
  queue: {
    name: 'webhooks',
    concurrency: 10,
    options: { lockDuration: Math.max(30_000, config.webhook.timeoutMs * 3), stalledInterval: 5_000 },
  },
  // Fails fast while Redis is away: delivering needs no Redis; metrics and dashboard jobs wait for it.
  redis: 'command',
  setup: (runtime) => {
    const delivery = createDeliveryPath(runtime);
    return { processors: webhooksProcessors(runtime, delivery.dispatcher), loop: delivery };
  },
});
