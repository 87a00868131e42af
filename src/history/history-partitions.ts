import type { DataSource } from 'typeorm';
import { config } from '../config.js';

/**
 * Days of partitions made ahead of today. The maintenance worker makes them hourly, so it may
 * be stopped this long before a row lands in a DEFAULT partition (where it waits, its insert
 * never failing, until its day's partition is made and it is moved there).
 */
export const DAYS_AHEAD = 7;

/**
 * How long maintenance waits for a lock: dropping a partition needs its parent table to
 * itself for an instant, and waiting queues every other statement on that table behind it.
 * Not had in time, the job fails and BullMQ retries it.
 */
const LOCK_TIMEOUT = '2s';

/**
 * The history tables, partitioned by UTC day of their event's `created_at` (the
 * HistoryPartitions migration), and how many days each keeps.
 */
export const HISTORY_TABLES = [
  // A delivery that can still be retried needs its event: events stay at least as long.
  { table: 'call_events', retentionDays: () => Math.max(config.eventRetentionDays, config.webhook.retentionDays) },
  { table: 'webhook_deliveries', retentionDays: () => config.webhook.retentionDays },
  { table: 'webhook_attempts', retentionDays: () => config.webhook.retentionDays },
] as const;

export type HistoryTable = (typeof HISTORY_TABLES)[number]['table'];

/**
 * Retention by whole days, for each history table: drops the partitions entirely older than
 * its retention (and deletes such rows from its DEFAULT partition), then makes every day's
 * partition from the start of its retention to DAYS_AHEAD ahead that is missing, moving in
 * any of that day's rows the DEFAULT partition holds. A row is kept its retention and at most
 * a day more. Returns what it did, per table.
 */
export async function maintainHistory(dataSource: DataSource): Promise<Record<HistoryTable, { dropped: number; created: number }>> {
  const done = {} as Record<HistoryTable, { dropped: number; created: number }>;
  for (const { table, retentionDays } of HISTORY_TABLES) {
    const days = retentionDays();
    const locked = async <T>(sql: string, params: unknown[]): Promise<T> =>
      dataSource.transaction(async (em) => {
        await em.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
        const [row] = await em.query(sql, params);
        return row.n;
      });
    const dropped = await locked<number>(`SELECT history_partitions_drop($1, now() - $2 * interval '1 day') AS n`, [table, days]);
    const created = await locked<number>(
      `SELECT history_partitions_create($1, ((now() - $2 * interval '1 day') AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date + $3::int) AS n`,
      [table, days, DAYS_AHEAD],
    );
    done[table] = { dropped, created };
  }
  return done;
}
