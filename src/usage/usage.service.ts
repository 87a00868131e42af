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
  charges: Amounts;
  billable: Amounts;
}

export interface Amounts {
  calls: string;
  other: string;
  total: string;
}

const amounts = (calls: bigint, other: bigint): Amounts => ({ calls: formatMoney(calls), other: formatMoney(other), total: formatMoney(calls + other) });

/** Exact (sums of integer micros) and current: what is not rolled up yet is read from the source. */
export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    private readonly tenants: Pick<TenantsService, 'get'>,
  ) {}

  async tenantUsage(actor: Actor, tenantId: string, query: UsageQuery, now: Date = new Date()): Promise<TenantUsage> {
    const window = resolveUsageWindow(query, now);
    // One round trip: the watermark is global and reveals nothing.
    const [tenant, watermark] = await Promise.all([this.tenants.get(actor, tenantId), this.repository.watermark()]);
    return { tenant_id: tenant.id, ...(await this.usageOf(tenant.id, actor.org.id, window, watermark)) };
  }

  private async usageOf(tenantId: string, resellerId: string, window: UsageWindow, watermark: Date | null): Promise<Omit<TenantUsage, 'tenant_id'>> {
    const { rolled, raw } = splitWindow(window, watermark);
    const row = await this.repository.usageOf(tenantId, resellerId, rolled, raw);
    return {
      since: window.since.toISOString(),
      until: window.until.toISOString(),
      completed_calls: Number(row.completed_calls),
      talk_time_seconds: Number(row.talk_time_seconds),
      currency: String(row.currency).trim(),
      charges: amounts(BigInt(row.call_charges), BigInt(row.other_charges)),
      billable: amounts(BigInt(row.billable_calls), BigInt(row.billable_other)),
    };
  }
}
