import { UnrecoverableError } from 'bullmq';
import type { CallEngine } from '../calls/engine.js';
import { logger } from '../lib/logger.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';

/**
 * What a disabled tenant's effects need of the campaigns and calls domains, which own those
 * rules (a running campaign, a call not yet ended).
 */
export interface TenantActivity {
  /** Pauses the organization's running campaigns; returns how many. */
  pauseRunningCampaigns(orgId: string): Promise<number>;
  /** The organization's calls not yet ended. */
  openCallIds(orgId: string): Promise<string[]>;
  /** Of `orgIds`, those with a running campaign or a call not yet ended. */
  withActivity(orgIds: string[]): Promise<string[]>;
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
    const paused = await this.activity.pauseRunningCampaigns(tenantId);
    const ended = await this.engine.end(await this.activity.openCallIds(tenantId), {
      status: 'canceled',
      endReason: 'tenant_disabled',
      at: tenant.disabledAt ?? new Date(),
    });
    if (paused || ended.length) logger.info({ tenantId, paused, ended: ended.length }, 'tenant disabled: campaigns paused, calls ended');
    return { paused, ended: ended.length };
  }

  /** Applies the state of every disabled tenant that still has something running (a lost job is made up here). */
  async sweep(): Promise<void> {
    for (const tenantId of await this.activity.withActivity(await this.orgs.disabledTenantIds())) await this.apply(tenantId);
  }
}
