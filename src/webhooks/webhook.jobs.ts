import type { JobQueue } from '../lib/queues.js';
import type { AttemptReport } from './dispatcher.js';

/**
 * A `deliver` job: one attempt of a delivery, now, whatever its status (a support retry). With
 * `failed`, it is first the dashboard's record of a delivery whose attempts are used up: it
 * fails at once, showing the last error, and support's "Retry" on it makes the attempt.
 */
export interface DeliverJob {
  deliveryId: string;
  /** The delivery's `created_at` (ISO), naming the partition it is in; absent from jobs queued before there were partitions. */
  createdAt?: string;
  failed?: { endpointId: string; event: string; error: string | null; responseStatus: number | null; attempts: number };
  /** Set once the failed record has been shown (so the next run is support's retry). */
  shown?: boolean;
}
export interface RecoverJob {
  endpointId: string;
  since: string;
}

/** The dashboard's job for a failed delivery: one per delivery, found by its id. */
export const failedJobId = (deliveryId: string) => `failed-${deliveryId}`;

/** How long finished jobs stay in the dashboard, and how many at most. */
const KEEP_COMPLETED = { age: 3600, count: 200 };
const KEEP_FAILED = { age: 30 * 24 * 3600, count: 10_000 };

/** Typed producers of the `webhooks` queue. Deliveries themselves are claimed from Postgres, not queued. */
export class WebhookJobs {
  constructor(readonly queue: JobQueue<'webhooks'>) {}

  /** A support retry, now (a fresh job id: it always runs). */
  async retryNow(deliveryId: string, createdAt: Date): Promise<void> {
    await this.queue.add('deliver', { deliveryId, createdAt: createdAt.toISOString() }, { attempts: 1, removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_COMPLETED });
  }

  async recover(endpointId: string, since: Date): Promise<void> {
    await this.queue.add('recover', { endpointId, since: since.toISOString() });
  }

  /**
   * Shows deliveries whose attempts are used up as failed jobs in the dashboard, named
   * `failed-<delivery id>`, with the endpoint, the event and the last answer; a delivery that
   * failed before is shown again with its latest answer.
   */
  async showFailed(reports: AttemptReport[]): Promise<void> {
    await this.clearFailed(reports.map((r) => r.target.delivery_id));
    await this.queue.addBulk(
      reports.map(({ target, recorded }) => ({
        name: 'deliver',
        data: {
          deliveryId: target.delivery_id,
          createdAt: target.created_at.toISOString(),
          failed: {
            endpointId: target.endpoint_id,
            event: String(target.payload.event),
            error: recorded.error,
            responseStatus: recorded.responseStatus,
            attempts: target.attempt_count + 1,
          },
        },
        // No stack trace: the dashboard shows support the answer, not our code's frames.
        opts: { jobId: failedJobId(target.delivery_id), attempts: 1, stackTraceLimit: 0, removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED },
      })),
    );
  }

  /** Takes deliveries off the dashboard's failed list (they are due again, or succeeded). */
  async clearFailed(deliveryIds: string[]): Promise<void> {
    // A job being retried right now is locked and stays: it completes or fails on its own.
    await Promise.all(deliveryIds.map((id) => this.queue.queue.remove(failedJobId(id)).catch(() => 0)));
  }
}
