import { UnrecoverableError } from 'bullmq';
import type { CallsRepository } from '../calls/calls.repository.js';
import type { CallEngine } from '../calls/engine.js';
import type { CampaignsRepository } from '../campaigns/campaigns.repository.js';
import { logger } from '../lib/logger.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';

/**
 * What a disabled tenant's effects need of the campaigns and calls domains, which own those
 * rules (a running campaign, a call not yet ended).
 */
export interface TenantActivity {
  campaigns: Pick<CampaignsRepository, 'pauseRunning' | 'orgsWithRunning'>;
  calls: Pick<CallsRepository, 'openCallIds' | 'orgsWithOpenCalls'>;
}

/**
 * The side effects of a disabled tenant (SPEC.md §3.1), idempotent: running campaigns pause;
 * calls not yet ended end `canceled` with `end_reason` `tenant_disabled`: queued ones
 * uncharged, those in progress charged up to the moment of disabling. (Its numbers stop
 * answering and no text is sent because the tenant is disabled: see receiveInbound and
 * sendConfirmation.) Nothing is deleted. An enabled tenant needs nothing undone.
 */
export class TenantEffects {
  constructor(
    private readonly orgs: OrganizationsRepository,
    private readonly activity: TenantActivity,
    private readonly engine: CallEngine,
  ) {}

  /**
   * Applies a tenant's state (the `apply-state` job). A tenant enabled again since is left as it
   * is. An id that is no tenant's cannot become one (tenants are never deleted, and the job is
   * enqueued after the change commits): retrying cannot help, so the job fails for good.
   */
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

  /** Applies the state of every disabled tenant that still has something running (a lost job is made up here). */
  async sweep(): Promise<void> {
    const disabled = await this.orgs.disabledTenantIds();
    const [running, calling] = await Promise.all([this.activity.campaigns.orgsWithRunning(disabled), this.activity.calls.orgsWithOpenCalls(disabled)]);
    for (const tenantId of new Set([...running, ...calling])) await this.apply(tenantId);
  }
}
