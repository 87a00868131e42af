import type { JobQueue } from '../jobs.js';

/** Producers of the `webhooks` queue (support jobs; deliveries are claimed from Postgres). */
export class WebhookJobs {
  constructor(readonly queue: JobQueue<'webhooks'>) {}

  /** A fresh job id each time, so it always runs. */
  async retryNow(deliveryId: string, createdAt: Date): Promise<void> {
    const keep = { age: 3600, count: 200 };
    await this.queue.add('deliver', { deliveryId, createdAt: createdAt.toISOString() }, { attempts: 1, removeOnComplete: keep, removeOnFail: keep });
  }

  async recover(endpointId: string, since: Date): Promise<void> {
    await this.queue.add('recover', { endpointId, since: since.toISOString() });
  }
}
