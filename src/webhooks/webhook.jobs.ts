import type { JobQueue } from '../jobs.js';

/** Typed producers of the `webhooks` queue. Deliveries themselves are claimed from Postgres, not queued. */
export class WebhookJobs {
  constructor(readonly queue: JobQueue<'webhooks'>) {}

  /** A support retry, now (a fresh job id: it always runs). */
  async retryNow(deliveryId: string, createdAt: Date): Promise<void> {
    const keep = { age: 3600, count: 200 };
    await this.queue.add('deliver', { deliveryId, createdAt: createdAt.toISOString() }, { attempts: 1, removeOnComplete: keep, removeOnFail: keep });
  }

  async recover(endpointId: string, since: Date): Promise<void> {
    await this.queue.add('recover', { endpointId, since: since.toISOString() });
  }
}
