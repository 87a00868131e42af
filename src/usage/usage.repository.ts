import type { DataSource } from 'typeorm';
import type { Range } from './usage-window.js';

/** One tenant's usage figures as the statement returns them: sums as text (they are exact integers), and the payer's currency. */
export interface UsageFigures {
  completed_calls: string;
  talk_time_seconds: string;
  call_charges: string;
  other_charges: string;
  billable_calls: string;
  billable_other: string;
  currency: string;
}

/**
 * The earliest time any organization has usage data, or null. One index probe per
 * organization (neither table has an index led by the time column).
 */
const EARLIEST_ACTIVITY = `
  SELECT LEAST(
    (SELECT min(l.created_at) FROM organizations o CROSS JOIN LATERAL
       (SELECT created_at FROM ledger_entries WHERE subject_org_id = o.id ORDER BY created_at LIMIT 1) l),
    (SELECT min(c.ended_at) FROM organizations o CROSS JOIN LATERAL
       (SELECT ended_at FROM calls WHERE payer_org_id = o.id AND ended_at IS NOT NULL ORDER BY ended_at LIMIT 1) c),
    (SELECT min(m.created_at) FROM organizations o CROSS JOIN LATERAL
       (SELECT created_at FROM messages WHERE org_id = o.id ORDER BY created_at LIMIT 1) m)
  ) AS earliest`;

/**
 * Which calls a usage figure counts, over alias `c`: the completed ones (`completed_calls`,
 * `talk_time_seconds`) and any with a billable amount (a tenant's call canceled while in
 * progress is billed, as it is charged). One spelling for the rollup and the read.
 */
const CALLS_COUNTED = `(c.status = 'completed' OR c.billable_micros > 0)`;
/** The ledger lines usage counts as charges (`charges.calls` and `charges.other`): all but adjustments (top-ups, corrections). */
const CHARGE_LINES = `kind <> 'adjustment'`;
const COMPLETED = `FILTER (WHERE c.status = 'completed')`;

/**
 * Recomputes every organization's buckets for the hours in [$1, $2) from the source rows and
 * upserts them: one set-based statement. The sources are reached per organization through
 * their indexes (calls by payer and end, the ledger by subject and time, texts by organization
 * and time), since the only way into any of them by time alone is a sequential scan; `OFFSET 0`
 * keeps the planner from flattening the lateral subqueries into a join that scans the whole
 * table for every chunk. A call belongs to the hour it ended in, a charge to the hour it was
 * written in, a text to the hour it was recorded in (its charge's, written in the same
 * transaction); charges are positive here (the ledger stores them negative); adjustments
 * (top-ups, corrections) are not usage. A bucket whose totals did not change is not rewritten.
 */
const ROLL_UP_HOURS = `
  INSERT INTO usage_buckets AS b (org_id, hour, completed_calls, talk_time_seconds, call_charges_micros, other_charges_micros, billable_calls_micros, billable_other_micros)
  SELECT org_id, hour, sum(completed_calls)::int, sum(talk_time_seconds)::bigint, sum(call_charges)::bigint, sum(other_charges)::bigint,
         sum(billable_calls)::bigint, sum(billable_other)::bigint
    FROM (
      SELECT c.org_id, date_trunc('hour', c.ended_at, 'UTC') AS hour,
             count(*) ${COMPLETED} AS completed_calls, COALESCE(sum(c.duration_seconds) ${COMPLETED}, 0) AS talk_time_seconds,
             0::numeric AS call_charges, 0::numeric AS other_charges, COALESCE(sum(c.billable_micros), 0) AS billable_calls, 0::numeric AS billable_other
        FROM organizations o CROSS JOIN LATERAL (
               SELECT org_id, ended_at, status, duration_seconds, billable_micros FROM calls c
                WHERE payer_org_id = o.id AND ended_at >= $1 AND ended_at < $2 AND ${CALLS_COUNTED} OFFSET 0) c
       GROUP BY 1, 2
      UNION ALL
      SELECT l.subject_org_id, date_trunc('hour', l.created_at, 'UTC'),
             0, 0,
             -COALESCE(sum(l.amount_micros) FILTER (WHERE l.kind = 'call'), 0),
             -COALESCE(sum(l.amount_micros) FILTER (WHERE l.kind <> 'call'), 0),
             0, 0
        FROM organizations o CROSS JOIN LATERAL (
               SELECT subject_org_id, created_at, kind, amount_micros FROM ledger_entries
                WHERE subject_org_id = o.id AND created_at >= $1 AND created_at < $2 AND ${CHARGE_LINES} OFFSET 0) l
       GROUP BY 1, 2
      UNION ALL
      SELECT m.org_id, date_trunc('hour', m.created_at, 'UTC'), 0, 0, 0, 0, 0, sum(m.billable_micros)
        FROM organizations o CROSS JOIN LATERAL (
               SELECT org_id, created_at, billable_micros FROM messages
                WHERE org_id = o.id AND created_at >= $1 AND created_at < $2 AND billable_micros > 0 OFFSET 0) m
       GROUP BY 1, 2
    ) parts
   GROUP BY org_id, hour
  ON CONFLICT (org_id, hour) DO UPDATE SET
     completed_calls = EXCLUDED.completed_calls,
     talk_time_seconds = EXCLUDED.talk_time_seconds,
     call_charges_micros = EXCLUDED.call_charges_micros,
     other_charges_micros = EXCLUDED.other_charges_micros,
     billable_calls_micros = EXCLUDED.billable_calls_micros,
     billable_other_micros = EXCLUDED.billable_other_micros
   WHERE (b.completed_calls, b.talk_time_seconds, b.call_charges_micros, b.other_charges_micros, b.billable_calls_micros, b.billable_other_micros)
         IS DISTINCT FROM (EXCLUDED.completed_calls, EXCLUDED.talk_time_seconds, EXCLUDED.call_charges_micros, EXCLUDED.other_charges_micros,
                           EXCLUDED.billable_calls_micros, EXCLUDED.billable_other_micros)`;

const ADVANCE_WATERMARK = `
  INSERT INTO usage_watermark (id, rolled_until) VALUES (1, $1)
  ON CONFLICT (id) DO UPDATE SET rolled_until = GREATEST(usage_watermark.rolled_until, EXCLUDED.rolled_until)`;

/** Serializes chunk transactions of concurrent rollups (two workers, or a worker and an operator). */
const ROLLUP_LOCK = `SELECT pg_advisory_xact_lock(hashtext('ringlane:usage-rollup'))`;

/**
 * One tenant's usage from a split window, in one statement: $1 tenant, $2 its reseller (the
 * payer of every tenant call: calls are reached through their (payer_org_id, ended_at) index,
 * the ledger through (subject_org_id, created_at), texts through (org_id, created_at)),
 * $3/$4 the rolled hours (NULLs: none), then
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
             WHERE subject_org_id = $1 AND created_at >= ${from} AND created_at < ${to} AND ${CHARGE_LINES}`,
    'SELECT NULL::varchar, NULL::bigint WHERE false',
  );
  const calls = each(
    (from, to) => `SELECT status, duration_seconds, billable_micros FROM calls c
             WHERE payer_org_id = $2 AND ended_at >= ${from} AND ended_at < ${to} AND org_id = $1 AND ${CALLS_COUNTED}`,
    'SELECT NULL::varchar, NULL::integer, NULL::bigint WHERE false',
  );
  const texts = each(
    (from, to) => `SELECT billable_micros FROM messages
             WHERE org_id = $1 AND created_at >= ${from} AND created_at < ${to} AND billable_micros > 0`,
    'SELECT NULL::bigint WHERE false',
  );
  return `
    WITH rolled AS (
      SELECT COALESCE(sum(completed_calls), 0) AS completed_calls, COALESCE(sum(talk_time_seconds), 0) AS talk_time_seconds,
             COALESCE(sum(call_charges_micros), 0) AS call_charges, COALESCE(sum(other_charges_micros), 0) AS other_charges,
             COALESCE(sum(billable_calls_micros), 0) AS billable_calls, COALESCE(sum(billable_other_micros), 0) AS billable_other
        FROM usage_buckets WHERE org_id = $1 AND hour >= $3 AND hour < $4
    ),
    raw_charges AS (
      SELECT -COALESCE(sum(amount_micros) FILTER (WHERE kind = 'call'), 0) AS call_charges,
             -COALESCE(sum(amount_micros) FILTER (WHERE kind <> 'call'), 0) AS other_charges
        FROM (${ledger}) AS l (kind, amount_micros)
    ),
    raw_calls AS (
      SELECT count(*) ${COMPLETED} AS completed_calls, COALESCE(sum(c.duration_seconds) ${COMPLETED}, 0) AS talk_time_seconds,
             COALESCE(sum(c.billable_micros), 0) AS billable_calls
        FROM (${calls}) AS c (status, duration_seconds, billable_micros)
    ),
    raw_texts AS (
      SELECT COALESCE(sum(billable_micros), 0) AS billable_other FROM (${texts}) AS m (billable_micros)
    )
    SELECT (rolled.completed_calls + raw_calls.completed_calls)::text AS completed_calls,
           (rolled.talk_time_seconds + raw_calls.talk_time_seconds)::text AS talk_time_seconds,
           (rolled.call_charges + raw_charges.call_charges)::text AS call_charges,
           (rolled.other_charges + raw_charges.other_charges)::text AS other_charges,
           (rolled.billable_calls + raw_calls.billable_calls)::text AS billable_calls,
           (rolled.billable_other + raw_texts.billable_other)::text AS billable_other,
           (SELECT currency FROM organizations WHERE id = $2) AS currency
      FROM rolled, raw_charges, raw_calls, raw_texts`;
}

/**
 * THE charges of organization `org` in [`since`, `until`) (SQL expressions; both whole UTC hours, as a
 * month's bounds are), in micros: `charges.total` of its usage for that window, split where usage
 * splits it (`splitWindow`): its buckets below the rollup's watermark, its ledger lines from there.
 * Two index ranges, never a scan of the window's calls. The watermark is read in the statement, so a
 * caller needs no round trip for it; any watermark ever written gives the same sum.
 */
export function chargedSql(org: string, since: string, until: string): string {
  const split = `GREATEST(${since}, LEAST(COALESCE(date_trunc('hour', (SELECT rolled_until FROM usage_watermark WHERE id = 1), 'UTC'), ${since}), ${until}))`;
  return `((SELECT COALESCE(sum(b.call_charges_micros + b.other_charges_micros), 0) FROM usage_buckets b
             WHERE b.org_id = ${org} AND b.hour >= ${since} AND b.hour < ${split})
         - (SELECT COALESCE(sum(l.amount_micros), 0) FROM ledger_entries l
             WHERE l.subject_org_id = ${org} AND l.created_at >= ${split} AND l.created_at < ${until} AND l.${CHARGE_LINES}))`;
}

/** The statement for 0, 1 or 2 raw ranges. */
const USAGE_STATEMENTS = [0, 1, 2].map(usageStatement);

/**
 * Usage: the hourly buckets (usage_buckets) and the rollup's watermark (usage_watermark), and
 * usage figures read from them and from the source rows (calls, the ledger, texts) not rolled up yet.
 */
export class UsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The rollup watermark: every hour before it is complete in usage_buckets (null before the first rollup). */
  async watermark(): Promise<Date | null> {
    const [mark] = await this.dataSource.query<Array<{ rolled_until: Date }>>('SELECT rolled_until FROM usage_watermark WHERE id = 1');
    return mark ? new Date(mark.rolled_until) : null;
  }

  /** The earliest time any organization has usage data (null: none has). */
  async earliestActivity(): Promise<Date | null> {
    const [{ earliest }] = await this.dataSource.query<Array<{ earliest: Date | null }>>(EARLIEST_ACTIVITY);
    return earliest ? new Date(earliest) : null;
  }

  /**
   * Recomputes every organization's buckets of the hours in `[from, to)` and advances the
   * watermark to `to`, in one transaction, serialized with any other rollup's.
   */
  async rollUpHours(from: Date, to: Date): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      await em.query(ROLLUP_LOCK);
      // The planner costs each organization's probe at the average organization's rows, which
      // with many organizations passes the JIT threshold: compiling costs far more than the work.
      await em.query('SET LOCAL jit = off');
      await em.query(ROLL_UP_HOURS, [from, to]);
      await em.query(ADVANCE_WATERMARK, [to]);
    });
  }

  /** Moves the watermark to `until` (never back). */
  async advanceWatermark(until: Date): Promise<void> {
    await this.dataSource.query(ADVANCE_WATERMARK, [until]);
  }

  /**
   * One tenant's usage (paid by `resellerId`): the `rolled` hours from buckets, the `raw`
   * ranges (at most two) from the source rows.
   */
  async usageOf(tenantId: string, resellerId: string, rolled: Range | null, raw: Range[]): Promise<UsageFigures> {
    const [row] = await this.dataSource.query<UsageFigures[]>(USAGE_STATEMENTS[raw.length], [
      tenantId,
      resellerId,
      rolled?.[0] ?? null,
      rolled?.[1] ?? null,
      ...raw.flat(),
    ]);
    return row;
  }
}
