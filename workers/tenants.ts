import { createCallsRuntime } from '../src/calls/calls.runtime.js';
import { registerCampaignHooks } from '../src/campaigns/campaign-runner.js';
import { logger } from '../src/lib/logger.js';
import { createRedis } from '../src/lib/redis.js';
import { tenantsProcessors } from './processors/tenants.processor.js';
import { runWorker } from './run-worker.js';

/** The `tenants` worker process: side effects of disabling a tenant. */
const redis = createRedis('blocking');
const calls = createCallsRuntime(redis);
registerCampaignHooks(calls.engine);

runWorker({
  queue: 'tenants',
  processors: tenantsProcessors(calls),
  concurrency: 4,
  options: { lockDuration: 30_000 },
  schedules: [{ id: 'sweep', every: 30_000 }],
  onStop: async () => {
    await calls.close();
    redis.disconnect();
  },
}).catch((err) => {
  logger.fatal({ err }, 'the tenants worker could not start');
  process.exit(1);
});
