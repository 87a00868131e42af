import type { JobQueue } from '../jobs.js';

export class TenantJobs {
  constructor(readonly queue: JobQueue<'tenants'>) {}

  /** Run a tenant's disable side effects (idempotent; re-run by the sweeper if lost). */
  async applyState(tenantId: string): Promise<void> {
    await this.queue.add('apply-state', { tenantId });
  }
}
