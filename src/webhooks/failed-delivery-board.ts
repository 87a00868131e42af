import { UnrecoverableError } from 'bullmq';
import type { FailedDeliveryJob, JobQueue, Processors } from '../jobs.js';
import type { AttemptReport } from './attempt-recorder.js';
import type { Dispatcher } from './dispatcher.js';

/** The dashboard job id of a failed delivery (one per delivery). */
export const failedJobId = (deliveryId: string) => `failed-${deliveryId}`;

const KEEP_COMPLETED = { age: 3600, count: 200 };
const KEEP_FAILED = { age: 30 * 24 * 3600, count: 10_000 };

const summary = (job: FailedDeliveryJob, error: string | null, status: number | null) =>
  `delivery ${job.deliveryId} (endpoint ${job.endpointId}, ${job.event}) failed: ${error ?? 'no answer'}` +
  `${status === null ? '' : `, last response status ${status}`}`;

/**
 * Failed deliveries as failed `failed-delivery` jobs in the queue dashboard, whose Retry sends again.
 * BullMQ cannot add a job as failed, so a job's first run fails on purpose; later runs are retries.
 * Support's retries through the API (`deliver`) are here too: one accepted takes its delivery off the list.
 */
export class FailedDeliveryBoard {
  constructor(private readonly queue: JobQueue<'webhooks'>) {}

  /** Support's retry through the API: one attempt now (a fresh job id each time, so it always runs). */
  async retryNow(deliveryId: string, createdAt: Date): Promise<void> {
    await this.queue.add(
      'deliver',
      { deliveryId, createdAt: createdAt.toISOString() },
      { attempts: 1, removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_COMPLETED },
    );
  }

  /** Lists failed deliveries; one already listed is replaced with its latest answer. */
  async list(reports: AttemptReport[]): Promise<void> {
    await this.clear(reports.map((r) => r.target.delivery_id));
    await this.queue.addBulk(
      reports.map(({ target, recorded }) => ({
        name: 'failed-delivery',
        data: {
          deliveryId: target.delivery_id,
          createdAt: target.created_at.toISOString(),
          endpointId: target.endpoint_id,
          event: String(target.payload.event),
          error: recorded.error,
          responseStatus: recorded.responseStatus,
          attempts: target.attempt_count + 1,
        },
        // No stack trace: the dashboard shows support the answer, not our code's frames.
        opts: { jobId: failedJobId(target.delivery_id), attempts: 1, stackTraceLimit: 0, removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED },
      })),
    );
  }

  /** Takes deliveries off the list. */
  async clear(deliveryIds: string[]): Promise<void> {
    // A job being retried right now is locked and stays: it completes or fails on its own.
    await Promise.all(deliveryIds.map((id) => this.queue.queue.remove(failedJobId(id)).catch(() => 0)));
  }

  /** Processors of `deliver` (API retry) and `failed-delivery` (dashboard retry). */
  processors(dispatcher: Pick<Dispatcher, 'deliverNow'>): Pick<Processors<'webhooks'>, 'deliver' | 'failed-delivery'> {
    const deliverNow = async (deliveryId: string, createdAt: string) => {
      const outcome = await dispatcher.deliverNow(deliveryId, new Date(createdAt));
      // Gone past retention (or with its endpoint): no retry brings it back.
      if (!outcome) throw new UnrecoverableError(`delivery ${deliveryId} no longer exists`);
      return outcome;
    };
    return {
      deliver: async (job) => {
        const { report, previousStatus } = await deliverNow(job.data.deliveryId, job.data.createdAt);
        if (report.decision.status !== 'succeeded') return `not accepted: ${report.recorded.error}`;
        if (previousStatus === 'failed') await this.clear([job.data.deliveryId]);
        return `accepted: HTTP ${report.recorded.responseStatus}`;
      },
      'failed-delivery': async (job) => {
        const { data } = job;
        if (!data.listed) {
          await job.updateData({ ...data, listed: true });
          throw new UnrecoverableError(summary(data, data.error, data.responseStatus));
        }
        const { report } = await deliverNow(data.deliveryId, data.createdAt);
        // Failed again: it stays in the failed list, with the new answer.
        if (report.decision.status !== 'succeeded') throw new UnrecoverableError(summary(data, report.recorded.error, report.recorded.responseStatus));
        return `accepted: HTTP ${report.recorded.responseStatus}`;
      },
    };
  }
}
