import type { DataSource } from 'typeorm';
import { db } from '../lib/db.js';
import { floorHour, HOUR_MS } from './usage-window.js';

/** Hours are rolled up only once they are this far in the past, so late commits land first. */
export const ROLLUP_LAG_MS = 15 * 60_000;

/** Every run also recomputes this many hours before the watermark, picking up rows committed late. */
export const REROLL_HOURS = 2;

/** Hours per statement: a first run over a year of history is a few dozen statements, not one huge one. */
export const CHUNK_HOURS = 7 * 24;

export interface RollupResult {
  /** First hour recomputed (null: nothing to do). */
  from: Date | null;
  /** The watermark afterwards: every hour before it is complete in usage_buckets. */
  rolledUntil: Date;
  /** Statements run (one per chunk). */
  chunks: number;
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
       (SELECT ended_at FROM calls WHERE payer_org_id = o.id AND ended_at IS NOT NULL ORDER BY ended_at LIMIT 1) c)
  ) AS earliest`;

/**
 * Recomputes every organization's buckets for the hours in [$1, $2) from the source rows and
 * upserts them: one set-based statement. The sources are reached per organization through
 * their indexes (calls by payer and end, the ledger by subject and time), since the only way
 * into either table by time alone is a sequential scan; `OFFSET 0` keeps the planner from
 * flattening the lateral subqueries into a join that scans the whole table for every chunk. A call belongs to the hour it ended
 * in, a charge to the hour it was written in; charges are positive here (the ledger stores
 * them negative); adjustments (top-ups, corrections) are not usage. A bucket whose totals did
 * not change is not rewritten.
 */
const ROLL_UP_HOURS = `
  INSERT INTO usage_buckets AS b (org_id, hour, completed_calls, talk_time_seconds, call_charges_micros, other_charges_micros)
  SELECT org_id, hour, sum(completed_calls)::int, sum(talk_time_seconds)::bigint, sum(call_charges)::bigint, sum(other_charges)::bigint
    FROM (
      SELECT c.org_id, date_trunc('hour', c.ended_at, 'UTC') AS hour,
             count(*) AS completed_calls, sum(COALESCE(c.duration_seconds, 0)) AS talk_time_seconds,
             0::numeric AS call_charges, 0::numeric AS other_charges
        FROM organizations o CROSS JOIN LATERAL (
               SELECT org_id, ended_at, duration_seconds FROM calls
                WHERE payer_org_id = o.id AND ended_at >= $1 AND ended_at < $2 AND status = 'completed' OFFSET 0) c
       GROUP BY 1, 2
      UNION ALL
      SELECT l.subject_org_id, date_trunc('hour', l.created_at, 'UTC'),
             0, 0,
             -COALESCE(sum(l.amount_micros) FILTER (WHERE l.kind = 'call'), 0),
             -COALESCE(sum(l.amount_micros) FILTER (WHERE l.kind <> 'call'), 0)
        FROM organizations o CROSS JOIN LATERAL (
               SELECT subject_org_id, created_at, kind, amount_micros FROM ledger_entries
                WHERE subject_org_id = o.id AND created_at >= $1 AND created_at < $2 AND kind <> 'adjustment' OFFSET 0) l
       GROUP BY 1, 2
    ) parts
   GROUP BY org_id, hour
  ON CONFLICT (org_id, hour) DO UPDATE SET
     completed_calls = EXCLUDED.completed_calls,
     talk_time_seconds = EXCLUDED.talk_time_seconds,
     call_charges_micros = EXCLUDED.call_charges_micros,
     other_charges_micros = EXCLUDED.other_charges_micros
   WHERE (b.completed_calls, b.talk_time_seconds, b.call_charges_micros, b.other_charges_micros)
         IS DISTINCT FROM (EXCLUDED.completed_calls, EXCLUDED.talk_time_seconds, EXCLUDED.call_charges_micros, EXCLUDED.other_charges_micros)`;

const ADVANCE_WATERMARK = `
  INSERT INTO usage_watermark (id, rolled_until) VALUES (1, $1)
  ON CONFLICT (id) DO UPDATE SET rolled_until = GREATEST(usage_watermark.rolled_until, EXCLUDED.rolled_until)`;

/** Serializes chunk transactions of concurrent rollups (two workers, or a worker and an operator). */
const ROLLUP_LOCK = `SELECT pg_advisory_xact_lock(hashtext('ringlane:usage-rollup'))`;

/**
 * Rolls usage up into hourly buckets (usage_buckets), for every organization, from the
 * watermark (less {@link REROLL_HOURS}, so rows committed late into those hours are counted;
 * on the first run, from the earliest activity) to the start of the hour holding
 * `now` − {@link ROLLUP_LAG_MS}; then advances the watermark. Idempotent: the buckets are
 * recomputed from the source rows, never incremented, so running it twice changes nothing.
 * Each chunk commits with the watermark it reached, so an interrupted first run resumes.
 */
export async function rollUp(now: Date = new Date(), source: DataSource = db): Promise<RollupResult> {
  let until = floorHour(new Date(now.getTime() - ROLLUP_LAG_MS));
  const [mark] = await source.query('SELECT rolled_until FROM usage_watermark WHERE id = 1');
  let from: Date | null;
  if (mark) {
    const rolledUntil = new Date(mark.rolled_until);
    from = new Date(rolledUntil.getTime() - REROLL_HOURS * HOUR_MS);
    if (until < rolledUntil) until = rolledUntil; // the watermark never moves back
  } else {
    const [{ earliest }] = await source.query(EARLIEST_ACTIVITY);
    from = earliest ? floorHour(new Date(earliest)) : null;
  }

  let chunks = 0;
  if (from && from < until) {
    for (let start = from; start < until; ) {
      const end = new Date(Math.min(start.getTime() + CHUNK_HOURS * HOUR_MS, until.getTime()));
      await source.transaction(async (em) => {
        await em.query(ROLLUP_LOCK);
        // The planner costs each organization's probe at the average organization's rows, which
        // with many organizations passes the JIT threshold: compiling costs far more than the work.
        await em.query('SET LOCAL jit = off');
        await em.query(ROLL_UP_HOURS, [start, end]);
        await em.query(ADVANCE_WATERMARK, [end]);
      });
      chunks++;
      start = end;
    }
  } else {
    await source.query(ADVANCE_WATERMARK, [until]);
  }
  return { from: chunks ? from : null, rolledUntil: until, chunks };
}
