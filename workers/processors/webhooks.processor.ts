import { UnrecoverableError } from 'bullmq';
import type { Runtime } from '../../src/runtime.js';
import type { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { failedJobId, type DeliverJob } from '../../src/webhooks/webhook.jobs.js';
import type { Processors } from '../run-worker.js';

/** What a failed delivery's job says in the dashboard. */
const failureSummary = (job: DeliverJob, error: string | null, status: number | null) =>
  `delivery ${job.deliveryId} (endpoint ${job.failed?.endpointId}, ${job.failed?.event}) failed: ${error ?? 'no answer'}` +
  `${status === null ? '' : `, last response status ${status}`}`;

/**
 * The `webhooks` queue. Deliveries are claimed from Postgres by the dispatcher; jobs here are
 * support's: a retry now (the API's, or "Retry" in the dashboard on a failed delivery's job),
 * the failed deliveries shown in the dashboard, and recovery of an endpoint (retention is the
 * maintenance worker's: it drops whole days of history).
 */
export function webhooksProcessors({ services, jobs: { webhooks: jobs } }: Runtime, dispatcher: Dispatcher): Processors<'webhooks'> {
  return {
    deliver: async (job) => {
      const data = job.data;
      if (data.failed && !data.shown) {
        // The record of a delivery whose attempts are used up: shown as a failed job, not sent.
        await job.updateData({ ...data, shown: true });
        throw new UnrecoverableError(failureSummary(data, data.failed.error, data.failed.responseStatus));
      }
      const outcome = await dispatcher.deliverNow(data.deliveryId, data.createdAt ? new Date(data.createdAt) : undefined);
      // Gone past retention (or with its endpoint): no retry brings it back.
      if (!outcome) throw new UnrecoverableError(`delivery ${data.deliveryId} no longer exists`);
      const { report, previousStatus } = outcome;
      if (report.decision.status === 'succeeded') {
        // A delivery that was failed is not any more: its dashboard job goes (unless it is this one).
        if (previousStatus === 'failed' && job.id !== failedJobId(data.deliveryId)) await jobs.clearFailed([data.deliveryId]);
        return `accepted: HTTP ${report.recorded.responseStatus}`;
      }
      // Support's retry of a failed delivery that failed again stays in the failed list, with the new answer.
      if (data.failed) throw new UnrecoverableError(failureSummary(data, report.recorded.error, report.recorded.responseStatus));
      return `not accepted: ${report.recorded.error}`;
    },
    recover: async (job) => {
      const retried = await services.webhookDeliveries.recoverNow(job.data.endpointId, new Date(job.data.since));
      if (retried === null) throw new UnrecoverableError(`endpoint ${job.data.endpointId} no longer exists`);
      return retried;
    },
  };
}
