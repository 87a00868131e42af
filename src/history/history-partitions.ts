import { config } from '../config.js';
import { retainedRange, type HistoryRange } from './history-range.js';
import type { HistoryRepository } from './history.repository.js';

/**
 * Days of partitions made ahead of today. The maintenance worker makes them hourly, so it may
 * be stopped this long before a row lands in a DEFAULT partition (where it waits, its insert
 * never failing, until its day's partition is made and it is moved there).
 */
export const DAYS_AHEAD = 7;

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
 * What `table` keeps at `now`: its retention's days back to now. The one reading of a history
 * table's retention: what is shown and retried is what maintenance keeps.
 */
export function retainedHistory(table: HistoryTable, now = Date.now()): HistoryRange {
  return retainedRange(HISTORY_TABLES.find((t) => t.table === table)!.retentionDays(), now);
}

/**
 * What the events feed shows at `now`: EVENT_RETENTION_DAYS back. `call_events` may keep more
 * (never fewer days than webhook deliveries, which need their events), but the feed shows this.
 */
export function retainedEvents(now = Date.now()): HistoryRange {
  return retainedRange(config.eventRetentionDays, now);
}

/** Retention by whole days, for each history table (the maintenance worker's hourly job). */
export class HistoryMaintenance {
  constructor(private readonly repository: HistoryRepository) {}

  /**
   * Drops the partitions entirely older than each table's retention (and deletes such rows
   * from its DEFAULT partition), then makes every day's partition from the start of its
   * retention to DAYS_AHEAD ahead that is missing, moving in any of that day's rows the
   * DEFAULT partition holds. A row is kept its retention and at most a day more. Returns what
   * it did, per table.
   */
  async maintain(): Promise<Record<HistoryTable, { dropped: number; created: number }>> {
    const done = {} as Record<HistoryTable, { dropped: number; created: number }>;
    for (const { table, retentionDays } of HISTORY_TABLES) {
      const days = retentionDays();
      const dropped = await this.repository.dropOlderThan(table, days);
      const created = await this.repository.createDays(table, days, DAYS_AHEAD);
      done[table] = { dropped, created };
    }
    return done;
  }
}
