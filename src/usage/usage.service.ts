import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { formatMoney } from '../lib/money.js';
import { findOwnTenant } from '../tenants/tenants.service.js';
import type { UsageQuery } from './usage.schemas.js';
import { ceilHour, floorHour, resolveUsageWindow, type UsageWindow } from './usage-window.js';

/**
 * One tenant's usage in a window, exact and current, in one statement (one snapshot):
 * the whole hours of the window below the rollup watermark come from usage_buckets (at most
 * 24 × 366 rows), everything else (the partial hours at the window's edges, and all from the
 * watermark on) straight from the ledger and the calls. The two parts never overlap.
 *
 * $1 tenant, $2 its reseller (the payer of every tenant call: calls are reached through
 * their (payer_org_id, ended_at) index), $3 since, $4 until, $5 first whole hour,
 * $6 end of the last whole hour.
 */
const TENANT_USAGE = `
  WITH split AS (
    SELECT $5::timestamptz AS rolled_from,
           GREATEST($5::timestamptz, LEAST($6::timestamptz,
             COALESCE((SELECT rolled_until FROM usage_watermark WHERE id = 1), '-infinity'))) AS rolled_to
  ),
  rolled AS (
    SELECT COALESCE(sum(completed_calls), 0) AS completed_calls, COALESCE(sum(talk_time_seconds), 0) AS talk_time_seconds,
           COALESCE(sum(call_charges_micros), 0) AS call_charges, COALESCE(sum(other_charges_micros), 0) AS other_charges
      FROM usage_buckets
     WHERE org_id = $1 AND hour >= (SELECT rolled_from FROM split) AND hour < (SELECT rolled_to FROM split)
  ),
  raw_charges AS (
    SELECT -COALESCE(sum(amount_micros) FILTER (WHERE kind = 'call'), 0) AS call_charges,
           -COALESCE(sum(amount_micros) FILTER (WHERE kind <> 'call'), 0) AS other_charges
      FROM (SELECT kind, amount_micros FROM ledger_entries
             WHERE subject_org_id = $1 AND created_at >= $3 AND created_at < LEAST((SELECT rolled_from FROM split), $4)
               AND kind <> 'adjustment'
            UNION ALL
            SELECT kind, amount_micros FROM ledger_entries
             WHERE subject_org_id = $1 AND created_at >= (SELECT rolled_to FROM split) AND created_at < $4
               AND kind <> 'adjustment') l
  ),
  raw_calls AS (
    SELECT count(*) AS completed_calls, COALESCE(sum(duration_seconds), 0) AS talk_time_seconds
      FROM (SELECT duration_seconds FROM calls
             WHERE payer_org_id = $2 AND ended_at >= $3 AND ended_at < LEAST((SELECT rolled_from FROM split), $4)
               AND org_id = $1 AND status = 'completed'
            UNION ALL
            SELECT duration_seconds FROM calls
             WHERE payer_org_id = $2 AND ended_at >= (SELECT rolled_to FROM split) AND ended_at < $4
               AND org_id = $1 AND status = 'completed') c
  )
  SELECT (rolled.completed_calls + raw_calls.completed_calls)::text AS completed_calls,
         (rolled.talk_time_seconds + raw_calls.talk_time_seconds)::text AS talk_time_seconds,
         (rolled.call_charges + raw_charges.call_charges)::text AS call_charges,
         (rolled.other_charges + raw_charges.other_charges)::text AS other_charges,
         (SELECT currency FROM organizations WHERE id = $2) AS currency
    FROM rolled, raw_charges, raw_calls`;

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

/** Usage figures of one tenant for a window (no access check: see {@link tenantUsage}). */
export async function usageOf(tenantId: string, resellerId: string, window: UsageWindow): Promise<Omit<TenantUsage, 'tenant_id'>> {
  const [row] = await db.query(TENANT_USAGE, [tenantId, resellerId, window.since, window.until, ceilHour(window.since), floorHour(window.until)]);
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

/**
 * `GET /v1/tenants/{id}/usage` (SPEC.md §2.2, §4.1): what the reseller's balance was charged
 * for one of its tenants, and the tenant's completed calls, in the reseller's currency.
 */
export async function tenantUsage(actor: Actor, tenantId: string, query: UsageQuery, now: Date = new Date()): Promise<TenantUsage> {
  const window = resolveUsageWindow(query, now);
  const tenant = await findOwnTenant(actor, tenantId);
  return { tenant_id: tenant.id, ...(await usageOf(tenant.id, actor.org.id, window)) };
}
