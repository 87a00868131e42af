import { UnrecoverableError } from 'bullmq';
import type { Processors } from '../../src/jobs.js';
import type { Runtime } from '../../src/runtime.js';
import type { Dispatcher } from '../../src/webhooks/dispatcher.js';

/** Deliveries are claimed from Postgres by the dispatcher; these jobs are support's: retries, failed deliveries, recovery. */
export function webhooksProcessors({ services, jobs }: Runtime, dispatcher: Dispatcher): Processors<'webhooks'> {
  return {
    ...jobs.failedDeliveries.processors(dispatcher),
    recover: async (job) => {
      const retried = await services.webhookDeliveries.recoverNow(job.data.endpointId, new Date(job.data.since));
      if (retried === null) throw new UnrecoverableError(`endpoint ${job.data.endpointId} no longer exists`);
      return retried;
    },
  };
}
