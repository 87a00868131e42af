import { insertOperationalEvents } from '../events/events.repository.js';
import { newId } from '../lib/ids.js';
import type { Micros } from '../lib/money.js';
import type { Sql } from '../lib/pagination.js';
import { chargedSql } from '../usage/usage.repository.js';

/** A calendar month, UTC: its bounds (whole hours) and its name, `YYYY-MM`. */
export interface SpendMonth {
  since: Date;
  until: Date;
  month: string;
}

/**
 * THE rule "the tenant's spend limit is reached", in SQL, for the `organizations` alias `org` and the
 * month [`since`, `until`) (SQL expressions): it has a limit, and this month's charges (`chargedSql`,
 * the `charges.total` of its usage) are at or above it. A tenant without a limit costs nothing: the
 * charges are read only past the CASE.
 */
export const spendLimitReachedSql = (org: string, since: string, until: string) =>
  `CASE WHEN ${org}.monthly_spend_limit_micros IS NULL THEN false
        ELSE ${chargedSql(`${org}.id`, since, until)} >= ${org}.monthly_spend_limit_micros END`;

/** A `tenant.spend_threshold` to send, unless sent already this month. */
export interface SpendThreshold {
  tenantId: string;
  resellerId: string;
  percent: number;
  spent: string;
  limit: string;
  currency: string;
}

/**
 * Each threshold reached is inserted into `tenant_spend_notices` (its key: tenant, month, threshold)
 * and only what was inserted becomes an event: at most once per tenant, month and threshold, however
 * many transactions reach it. `occurred_at` ($9) is when the spend was read under the tenant's
 * lock (see src/tenants/spend-limit.ts), else the statement's clock.
 */
const RECORD_THRESHOLDS = `
  WITH reached AS (
         SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::smallint[], $5::varchar[], $6::varchar[], $7::varchar[])
           AS t(event_id, tenant_id, reseller_id, percent, spent, lim, currency)),
       sent AS (
         INSERT INTO tenant_spend_notices (tenant_id, month, threshold_percent)
         SELECT tenant_id, $8, percent FROM reached ORDER BY tenant_id, percent
         ON CONFLICT DO NOTHING
         RETURNING tenant_id, threshold_percent)
  ${insertOperationalEvents(`
    SELECT r.event_id, r.reseller_id, 'tenant.spend_threshold',
           jsonb_build_object('tenant_id', r.tenant_id, 'threshold_percent', r.percent, 'spent', r.spent, 'limit', r.lim, 'currency', r.currency, 'month', $8::varchar),
           COALESCE($9::timestamptz, clock_timestamp())
      FROM reached r JOIN sent s ON s.tenant_id = r.tenant_id AND s.threshold_percent = r.percent
     ORDER BY r.tenant_id, r.percent`)}`;

/** The month's spend of tenants, and the thresholds sent (`tenant_spend_notices`). */
export class SpendLimitsRepository {
  /**
   * Each tenant's charges in `month` (`chargedSql`), one statement for all of them, and the
   * database's clock as it read them (`at`, to the microsecond, as text).
   */
  async spentBy(sql: Sql, tenantIds: string[], month: SpendMonth): Promise<{ spent: Map<string, Micros>; at: string }> {
    const rows = (await sql.query(
      `SELECT t.id, ${chargedSql('t.id', '$2::timestamptz', '$3::timestamptz')}::text AS spent, clock_timestamp()::text AS at FROM unnest($1::varchar[]) AS t(id)`,
      [tenantIds, month.since, month.until],
    )) as Array<{ id: string; spent: string; at: string }>;
    return { spent: new Map(rows.map((r) => [r.id, BigInt(r.spent)])), at: rows[0].at };
  }

  /** Writes, in `sql`'s transaction, the events of the thresholds not sent yet this month, which occurred `at` (null: now); one statement. */
  async recordThresholds(sql: Sql, month: SpendMonth, thresholds: SpendThreshold[], at: string | null): Promise<void> {
    if (thresholds.length === 0) return;
    await sql.query(RECORD_THRESHOLDS, [
      thresholds.map(() => newId('evt')),
      thresholds.map((t) => t.tenantId),
      thresholds.map((t) => t.resellerId),
      thresholds.map((t) => t.percent),
      thresholds.map((t) => t.spent),
      thresholds.map((t) => t.limit),
      thresholds.map((t) => t.currency),
      month.month,
      at,
    ]);
  }
}
