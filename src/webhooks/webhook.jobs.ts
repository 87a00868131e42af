import type { JobQueue } from '../jobs.js';

/** Producers of the `webhooks` queue (support jobs; deliveries are claimed from Postgres). */
export class WebhookJobs {
  constructor(readonly queue: JobQueue<'webhooks'>) {}

  async recover(endpointId: string, since: Date): Promise<void> {
    await this.queue.add('recover', { endpointId, since: since.toISOString() });
  }
}
