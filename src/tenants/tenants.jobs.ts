import type { JobQueue } from '../jobs.js';

/** Typed producers of the `tenants` queue. */
export class TenantJobs {
  constructor(readonly queue: JobQueue<'tenants'>) {}

  async applyState(tenantId: string): Promise<void> {
    await this.queue.add('apply-state', { tenantId });
  }
}
