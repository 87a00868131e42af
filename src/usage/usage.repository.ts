import type { DataSource } from 'typeorm';
import type { WindowParts } from './usage-window.js';
import { Reads } from '../lib/reads.js';

/** A tenant and its usage figures as the statement returns them: sums as text (they are exact integers), and the payer's currency. */
export interface UsageFigures {
  tenant_id: string;
  name: string;
  external_ref: string | null;
  disabled: boolean;
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
 * Which of a reseller's tenants a usage statement covers, given its first parameter after the
 * window's (`$n`): one tenant (`$n` its id), or a page in byte order of id (`$n` its size, and
 * after a cursor, `$n+1` the last id of the page before). Byte order whatever the database's
 * collation (CONTRACT.md §5 "Usage of every tenant"): the reseller's tenants are reached through
 * the (parent_id, ...) index and sorted, as many rows as it has tenants (its `tenant_limit`).
 */
const TENANT_SETS = {
  one: (n: number) => `parent_id = $1 AND id = $${n}`,
  first: (n: number) => `parent_id = $1 ORDER BY id COLLATE "C" LIMIT $${n}`,
  after: (n: number) => `parent_id = $1 AND id COLLATE "C" > $${n + 1} ORDER BY id COLLATE "C" LIMIT $${n}`,
};
type TenantSet = keyof typeof TENANT_SETS;

/**
 * THE usage of a set of tenants of one reseller, one statement whatever their number: $1 the
 * reseller, $2/$3 the rolled hours (NULLs: none), then the raw ranges, then the tenant set's
 * (`TENANT_SETS`). One row per tenant of the set, in byte order of id. Each tenant's buckets,
 * ledger lines and texts are read through its own index ranges (usage_buckets_org_hour_sums_idx,
 * index-only; (subject_org_id, created_at); (org_id, created_at)), as `LATERAL` aggregates, which
 * the planner runs per tenant and cannot turn into a scan of every organization's rows; the raw
 * ranges' calls through the reseller's (payer_org_id, ended_at) range, once for the whole set
 * (the reseller pays every tenant call). Plain parameters, not values computed in SQL, so the
 * planner sees the real ranges. One tenant's usage and every tenant's report are this one
 * statement, so they cannot differ.
 */
function usageStatement(rawRanges: number, tenants: TenantSet): string {
  // One index range per raw range (UNION ALL, not OR: an OR may be planned as one scan of all the rows).
  const each = (select: (from: string, to: string) => string, none: string) =>
    Array.from({ length: rawRanges }, (_, i) => select(`$${4 + 2 * i}`, `$${5 + 2 * i}`)).join(' UNION ALL ') || none;
  const ledger = each(
    (from, to) => `SELECT kind, amount_micros FROM ledger_entries
             WHERE subject_org_id = t.id AND created_at >= ${from} AND created_at < ${to} AND ${CHARGE_LINES}`,
    'SELECT NULL::varchar, NULL::bigint WHERE false',
  );
  const calls = each(
    (from, to) => `SELECT c.org_id, c.status, c.duration_seconds, c.billable_micros FROM calls c
             WHERE c.payer_org_id = $1 AND c.ended_at >= ${from} AND c.ended_at < ${to} AND c.org_id IN (SELECT id FROM t) AND ${CALLS_COUNTED}`,
    'SELECT NULL::varchar, NULL::varchar, NULL::integer, NULL::bigint WHERE false',
  );
  const texts = each(
    (from, to) => `SELECT billable_micros FROM messages
             WHERE org_id = t.id AND created_at >= ${from} AND created_at < ${to} AND billable_micros > 0`,
    'SELECT NULL::bigint WHERE false',
  );
  return `
    WITH t AS (
      SELECT id, name, external_ref, disabled FROM organizations WHERE ${TENANT_SETS[tenants](4 + 2 * rawRanges)}
    ),
    raw_calls AS (
      SELECT c.org_id, count(*) ${COMPLETED} AS completed_calls, COALESCE(sum(c.duration_seconds) ${COMPLETED}, 0) AS talk_time_seconds,
             COALESCE(sum(c.billable_micros), 0) AS billable_calls
        FROM (${calls}) AS c (org_id, status, duration_seconds, billable_micros)
       GROUP BY c.org_id
    )
    SELECT t.id AS tenant_id, t.name, t.external_ref, t.disabled,
           (rolled.completed_calls + COALESCE(raw_calls.completed_calls, 0))::text AS completed_calls,
           (rolled.talk_time_seconds + COALESCE(raw_calls.talk_time_seconds, 0))::text AS talk_time_seconds,
           (rolled.call_charges + raw_charges.call_charges)::text AS call_charges,
           (rolled.other_charges + raw_charges.other_charges)::text AS other_charges,
           (rolled.billable_calls + COALESCE(raw_calls.billable_calls, 0))::text AS billable_calls,
           (rolled.billable_other + raw_texts.billable_other)::text AS billable_other,
           payer.currency
      FROM t
      CROSS JOIN (SELECT currency FROM organizations WHERE id = $1) AS payer
      CROSS JOIN LATERAL (
        SELECT COALESCE(sum(completed_calls), 0) AS completed_calls, COALESCE(sum(talk_time_seconds), 0) AS talk_time_seconds,
               COALESCE(sum(call_charges_micros), 0) AS call_charges, COALESCE(sum(other_charges_micros), 0) AS other_charges,
               COALESCE(sum(billable_calls_micros), 0) AS billable_calls, COALESCE(sum(billable_other_micros), 0) AS billable_other
          FROM usage_buckets WHERE org_id = t.id AND hour >= $2 AND hour < $3
      ) AS rolled
      CROSS JOIN LATERAL (
        SELECT -COALESCE(sum(amount_micros) FILTER (WHERE kind = 'call'), 0) AS call_charges,
               -COALESCE(sum(amount_micros) FILTER (WHERE kind <> 'call'), 0) AS other_charges
          FROM (${ledger}) AS l (kind, amount_micros)
      ) AS raw_charges
      CROSS JOIN LATERAL (
        SELECT COALESCE(sum(billable_micros), 0) AS billable_other FROM (${texts}) AS m (billable_micros)
      ) AS raw_texts
      LEFT JOIN raw_calls ON raw_calls.org_id = t.id
     ORDER BY t.id COLLATE "C"`;
}

/** The statement of each tenant set, for 0, 1 or 2 raw ranges. */
const USAGE_STATEMENTS = Object.fromEntries(
  (Object.keys(TENANT_SETS) as TenantSet[]).map((set) => [set, [0, 1, 2].map((raw) => usageStatement(raw, set))]),
) as Record<TenantSet, string[]>;

/** Where a page of tenants starts (`after`: the last id of the page before, null for the first) and how many it holds. */
export interface TenantPage {
  after: string | null;
  size: number;
}

/**
 * THE charges of organization `org` in [`since`, `until`) (SQL expressions; both whole UTC hours, as a
 * month's bounds are), in micros: `charges.total` of its usage for that window, split where usage
 * splits it (`splitWindow`): its buckets below the rollup's watermark, its ledger lines from there.
 * Two index ranges (the buckets' index-only), never a scan of the window's calls. The watermark is read in the statement, so a
 * caller needs no round trip for it; any watermark ever written gives the same sum.
 */
export function chargedSql(org: string, since: string, until: string): string {
  const split = `GREATEST(${since}, LEAST(COALESCE(date_trunc('hour', (SELECT rolled_until FROM usage_watermark WHERE id = 1), 'UTC'), ${since}), ${until}))`;
  return `((SELECT COALESCE(sum(b.call_charges_micros + b.other_charges_micros), 0) FROM usage_buckets b
             WHERE b.org_id = ${org} AND b.hour >= ${since} AND b.hour < ${split})
         - (SELECT COALESCE(sum(l.amount_micros), 0) FROM ledger_entries l
             WHERE l.subject_org_id = ${org} AND l.created_at >= ${split} AND l.created_at < ${until} AND l.${CHARGE_LINES}))`;
}

/**
 * Usage: the hourly buckets (usage_buckets) and the rollup's watermark (usage_watermark), and
 * usage figures read from them and from the source rows (calls, the ledger, texts) not rolled up yet.
 */
export class UsageRepository {
  constructor(
    private readonly dataSource: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(dataSource),
  ) {}

  /** The rollup watermark: every hour before it is complete in usage_buckets (null before the first rollup). */
  async watermark(): Promise<Date | null> {
    const [mark] = await this.reads.run((sql) => sql.query<Array<{ rolled_until: Date }>>('SELECT rolled_until FROM usage_watermark WHERE id = 1'));
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

  /** One tenant's usage over `parts` of a window (null: `tenantId` is no tenant of `resellerId`). */
  async usageOf(resellerId: string, tenantId: string, parts: WindowParts): Promise<UsageFigures | null> {
    const [row] = await this.usage('one', resellerId, parts, [tenantId]);
    return row ?? null;
  }

  /** The usage of a page of the reseller's tenants (in byte order of id) over `parts` of a window: one statement. */
  usagePage(resellerId: string, parts: WindowParts, page: TenantPage): Promise<UsageFigures[]> {
    return page.after === null ? this.usage('first', resellerId, parts, [page.size]) : this.usage('after', resellerId, parts, [page.size, page.after]);
  }

  private usage(tenants: TenantSet, resellerId: string, { rolled, raw }: WindowParts, tenantParams: unknown[]): Promise<UsageFigures[]> {
    const params = [resellerId, rolled?.[0] ?? null, rolled?.[1] ?? null, ...raw.flat(), ...tenantParams];
    return this.reads.run((sql) => sql.query<UsageFigures[]>(USAGE_STATEMENTS[tenants][raw.length], params));
  }
}
