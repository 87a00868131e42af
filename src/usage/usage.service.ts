import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { formatMoney } from '../lib/money.js';
import { findOwnTenant } from '../tenants/tenants.service.js';
import type { UsageQuery } from './usage.schemas.js';
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
 * One tenant's usage from a split window, in one statement: $1 tenant, $2 its reseller (the
 * payer of every tenant call: calls are reached through their (payer_org_id, ended_at) index,
 * the ledger through (subject_org_id, created_at)), $3/$4 the rolled hours (NULLs: none), then
 * the raw ranges. Plain parameters, not values computed in SQL, so the planner sees the real
 * ranges: its estimates stay small, and no plan for a few rows is costed high enough to be
 * JIT-compiled.
 */
function usageStatement(rawRanges: number): string {
  // One index range per raw range (UNION ALL, not OR: an OR may be planned as one scan of all the tenant's rows).
  const each = (select: (from: string, to: string) => string, none: string) =>
    Array.from({ length: rawRanges }, (_, i) => select(`$${5 + 2 * i}`, `$${6 + 2 * i}`)).join(' UNION ALL ') || none;
  const ledger = each(
    (from, to) => `SELECT kind, amount_micros FROM ledger_entries
             WHERE subject_org_id = $1 AND created_at >= ${from} AND created_at < ${to} AND kind <> 'adjustment'`,
    'SELECT NULL::varchar, NULL::bigint WHERE false',
  );
  const calls = each(
    (from, to) => `SELECT duration_seconds FROM calls
             WHERE payer_org_id = $2 AND ended_at >= ${from} AND ended_at < ${to} AND org_id = $1 AND status = 'completed'`,
    'SELECT NULL::integer WHERE false',
  );
  return `
    WITH rolled AS (
      SELECT COALESCE(sum(completed_calls), 0) AS completed_calls, COALESCE(sum(talk_time_seconds), 0) AS talk_time_seconds,
             COALESCE(sum(call_charges_micros), 0) AS call_charges, COALESCE(sum(other_charges_micros), 0) AS other_charges
        FROM usage_buckets WHERE org_id = $1 AND hour >= $3 AND hour < $4
    ),
    raw_charges AS (
      SELECT -COALESCE(sum(amount_micros) FILTER (WHERE kind = 'call'), 0) AS call_charges,
             -COALESCE(sum(amount_micros) FILTER (WHERE kind <> 'call'), 0) AS other_charges
        FROM (${ledger}) AS l (kind, amount_micros)
    ),
    raw_calls AS (
      SELECT count(*) AS completed_calls, COALESCE(sum(duration_seconds), 0) AS talk_time_seconds
        FROM (${calls}) AS c (duration_seconds)
    )
    SELECT (rolled.completed_calls + raw_calls.completed_calls)::text AS completed_calls,
           (rolled.talk_time_seconds + raw_calls.talk_time_seconds)::text AS talk_time_seconds,
           (rolled.call_charges + raw_charges.call_charges)::text AS call_charges,
           (rolled.other_charges + raw_charges.other_charges)::text AS other_charges,
           (SELECT currency FROM organizations WHERE id = $2) AS currency
      FROM rolled, raw_charges, raw_calls`;
}

/** The statement for 0, 1 or 2 raw ranges. */
const USAGE_STATEMENTS = [0, 1, 2].map(usageStatement);

/** The rollup watermark (null before the first rollup). */
export async function rolledUntil(): Promise<Date | null> {
  const [mark] = await db.query('SELECT rolled_until FROM usage_watermark WHERE id = 1');
  return mark ? new Date(mark.rolled_until) : null;
}

/** Usage figures of one tenant (paid by `resellerId`) for a window; no access check. */
export async function usageOf(tenantId: string, resellerId: string, window: UsageWindow, watermark: Date | null): Promise<Omit<TenantUsage, 'tenant_id'>> {
  const { rolled, raw } = splitWindow(window, watermark);
  const [row] = await db.query(USAGE_STATEMENTS[raw.length], [tenantId, resellerId, rolled?.[0] ?? null, rolled?.[1] ?? null, ...raw.flat()]);
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
 * `GET /v1/tenants/{id}/usage` (SPEC.md §2.2, §4.1): the tenant's completed calls and talk
 * time, and what the reseller's balance was charged for it, in the reseller's currency. Exact
 * (sums of integer micros) and current (anything not yet rolled up is read from the source).
 */
export async function tenantUsage(actor: Actor, tenantId: string, query: UsageQuery, now: Date = new Date()): Promise<TenantUsage> {
  const window = resolveUsageWindow(query, now);
  // Independent reads, so one round trip: the watermark is global and reveals nothing.
  const [tenant, watermark] = await Promise.all([findOwnTenant(actor, tenantId), rolledUntil()]);
  return { tenant_id: tenant.id, ...(await usageOf(tenant.id, actor.org.id, window, watermark)) };
}
