import { config } from '../config.js';
import { retainedRange, type HistoryRange } from './history-range.js';
import type { HistoryRepository } from './history.repository.js';

/**
 * Partitions made ahead, hourly: maintenance may stop this long before a row lands in DEFAULT (where
 * its insert still succeeds, and it is moved once its day's partition exists).
 */
export const DAYS_AHEAD = 7;

/** Partitioned by UTC day of the event's `created_at`, with each table's retention. */
export const HISTORY_TABLES = [
  // A delivery that can still be retried needs its event: events stay at least as long.
  { table: 'call_events', retentionDays: () => Math.max(config.eventRetentionDays, config.webhook.retentionDays) },
  { table: 'webhook_deliveries', retentionDays: () => config.webhook.retentionDays },
  { table: 'webhook_attempts', retentionDays: () => config.webhook.retentionDays },
] as const;

export type HistoryTable = (typeof HISTORY_TABLES)[number]['table'];

/** The one reading of a table's retention: what is shown and retried is what maintenance keeps. */
export function retainedHistory(table: HistoryTable, now = Date.now()): HistoryRange {
  return retainedRange(HISTORY_TABLES.find((t) => t.table === table)!.retentionDays(), now);
}

/** `call_events` may keep more (deliveries need their events), but the feed shows EVENT_RETENTION_DAYS. */
export function retainedEvents(now = Date.now()): HistoryRange {
  return retainedRange(config.eventRetentionDays, now);
}

/** Retention by whole days, for each history table (the maintenance worker's hourly job). */
export class HistoryMaintenance {
  constructor(private readonly repository: HistoryRepository) {}

  /**
   * Drops partitions wholly past retention (and such DEFAULT rows), then makes each missing day's partition
   * up to DAYS_AHEAD, moving in DEFAULT rows. A row is kept its retention and at most a day more.
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
