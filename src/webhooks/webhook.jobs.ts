import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

export interface DeliverJob {
  deliveryId: string;
  /** A support retry: send whatever the delivery's status. */
  manual?: boolean;
}
export interface RecoverJob {
  endpointId: string;
  since: string;
}

/** Typed producers of the `webhooks` queue. */
export class WebhookJobs {
  constructor(
    readonly queue: Queue,
    /** The same connection, for the service-wide metrics kept in Redis. */
    readonly redis: Redis,
  ) {}

  /**
   * Schedules attempt `attempt` of deliveries. The job id is fixed per delivery and attempt,
   * so the relay, the worker and the sweeper may all ask for it: it is queued once.
   */
  async deliver(items: Array<{ deliveryId: string; attempt: number; delayMs?: number }>): Promise<void> {
    if (items.length === 0) return;
    await this.queue.addBulk(
      items.map(({ deliveryId, attempt, delayMs }) => ({
        name: 'deliver',
        data: { deliveryId } satisfies DeliverJob,
        opts: { jobId: `${deliveryId}-a${attempt}`, delay: Math.max(0, delayMs ?? 0), removeOnComplete: true, removeOnFail: true },
      })),
    );
  }

  /** A support retry, now (a fresh job id: it always runs). */
  async retryNow(deliveryId: string): Promise<void> {
    await this.queue.add('deliver', { deliveryId, manual: true } satisfies DeliverJob, { removeOnComplete: true, removeOnFail: true });
  }

  async recover(endpointId: string, since: Date): Promise<void> {
    await this.queue.add('recover', { endpointId, since: since.toISOString() } satisfies RecoverJob);
  }
}
