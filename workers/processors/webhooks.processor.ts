import { DelayedError, type Job } from 'bullmq';
import { config } from '../../src/config.js';
import { db } from '../../src/lib/db.js';
import { attemptDelivery, EndpointBusyError, EndpointGate } from '../../src/webhooks/deliver.js';
import { purgeOldDeliveries, retryFailed, sweepDeliveries } from '../../src/webhooks/webhook-maintenance.js';
import type { DeliverJob, RecoverJob, WebhookJobs } from '../../src/webhooks/webhook.jobs.js';
import type { Processors } from '../run-worker.js';

/** The `webhooks` queue: delivery attempts, the sweeper, support recovery, retention. */
export function webhooksProcessors(jobs: WebhookJobs): Processors<'webhooks'> {
  const gate = new EndpointGate(config.webhookEndpointConcurrency);
  return {
    deliver: async (job: Job<DeliverJob>, token?: string) => {
      try {
        await attemptDelivery(db, jobs, gate, job.data.deliveryId, job.data.manual ?? false);
      } catch (err) {
        if (!(err instanceof EndpointBusyError)) throw err;
        // The endpoint is at its limit in this process: come back shortly, without using up an attempt.
        await job.moveToDelayed(Date.now() + 100 + Math.floor(Math.random() * 200), token);
        throw new DelayedError();
      }
    },
    sweep: () => sweepDeliveries(db, jobs),
    recover: (job: Job<RecoverJob>) => retryFailed(db, jobs, { endpointId: job.data.endpointId, since: new Date(job.data.since) }),
    purge: () => purgeOldDeliveries(db),
  };
}
