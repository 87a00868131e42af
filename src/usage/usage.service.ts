import type { Actor } from '../auth/actor.js';
import { formatMoney } from '../lib/money.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { UsageQuery } from './usage.schemas.js';
import type { UsageRepository } from './usage.repository.js';
import { resolveUsageWindow, splitWindow, type UsageWindow } from './usage-window.js';

/** CONTRACT.md "Usage". */
export interface TenantUsage {
  tenant_id: string;
  since: string;
  until: string;
  completed_calls: number;
  talk_time_seconds: number;
  currency: string;
  charges: { calls: string; other: string; total: string };
}

/**
 * `GET /v1/tenants/{id}/usage` (SPEC.md §2.2, §4.1): the tenant's completed calls and talk
 * time, and what the reseller's balance was charged for it, in the reseller's currency. Exact
 * (sums of integer micros) and current (anything not yet rolled up is read from the source).
 */
export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    /** The tenants domain: which tenants are the caller's (404 `tenant_not_found` otherwise). */
    private readonly tenants: Pick<TenantsService, 'get'>,
  ) {}

  /** The usage of one of the caller's tenants over the query's window (404 `tenant_not_found` for any other id). */
  async tenantUsage(actor: Actor, tenantId: string, query: UsageQuery, now: Date = new Date()): Promise<TenantUsage> {
    const window = resolveUsageWindow(query, now);
    // Independent reads, so one round trip: the watermark is global and reveals nothing.
    const [tenant, watermark] = await Promise.all([this.tenants.get(actor, tenantId), this.repository.watermark()]);
    return { tenant_id: tenant.id, ...(await this.usageOf(tenant.id, actor.org.id, window, watermark)) };
  }

  /** Usage figures of one tenant (paid by `resellerId`) for a window; no access check. */
  private async usageOf(tenantId: string, resellerId: string, window: UsageWindow, watermark: Date | null): Promise<Omit<TenantUsage, 'tenant_id'>> {
    const { rolled, raw } = splitWindow(window, watermark);
    const row = await this.repository.usageOf(tenantId, resellerId, rolled, raw);
    const calls = BigInt(row.call_charges);
    const other = BigInt(row.other_charges);
    return {
      since: window.since.toISOString(),
      until: window.until.toISOString(),
      completed_calls: Number(row.completed_calls),
      talk_time_seconds: Number(row.talk_time_seconds),
      currency: String(row.currency).trim(),
      charges: { calls: formatMoney(calls), other: formatMoney(other), total: formatMoney(calls + other) },
    };
  }
}
