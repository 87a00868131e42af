import { UnrecoverableError } from 'bullmq';
import type { CallsRepository } from '../calls/calls.repository.js';
import type { CallEngine } from '../calls/engine.js';
import type { CampaignsRepository } from '../campaigns/campaigns.repository.js';
import { logger } from '../lib/logger.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';

/** What a disabled tenant's effects need of the campaigns and calls domains, which own those rules. */
export interface TenantActivity {
  campaigns: Pick<CampaignsRepository, 'pauseRunning' | 'orgsWithRunning'>;
  calls: Pick<CallsRepository, 'openCallIds' | 'orgsWithOpenCalls'>;
}

/**
 * A disabled tenant's side effects (SPEC.md §3.1), idempotent: campaigns pause, unended calls end
 * `canceled`/`tenant_disabled` (queued uncharged, in progress charged up to disabling). Nothing is deleted.
 */
export class TenantEffects {
  constructor(
    private readonly orgs: OrganizationsRepository,
    private readonly activity: TenantActivity,
    private readonly engine: CallEngine,
  ) {}

  /** The `apply-state` job. A re-enabled tenant is left alone; an id that is no tenant's never becomes one, so it fails for good. */
  async apply(tenantId: string): Promise<{ paused: number; ended: number }> {
    const tenant = await this.orgs.tenantState(tenantId);
    if (!tenant) throw new UnrecoverableError(`no tenant ${tenantId}`);
    if (!tenant.disabled) return { paused: 0, ended: 0 };
    const paused = await this.activity.campaigns.pauseRunning(tenantId);
    const ended = await this.engine.end(await this.activity.calls.openCallIds(tenantId), {
      status: 'canceled',
      endReason: 'tenant_disabled',
      at: tenant.disabledAt ?? new Date(),
    });
    if (paused || ended.length) logger.info({ tenantId, paused, ended: ended.length }, 'tenant disabled: campaigns paused, calls ended');
    return { paused, ended: ended.length };
  }

  /** Makes up for a lost job: applies every disabled tenant that still has something running. */
  async sweep(): Promise<void> {
    const disabled = await this.orgs.disabledTenantIds();
    const [running, calling] = await Promise.all([this.activity.campaigns.orgsWithRunning(disabled), this.activity.calls.orgsWithOpenCalls(disabled)]);
    for (const tenantId of new Set([...running, ...calling])) await this.apply(tenantId);
  }
}
