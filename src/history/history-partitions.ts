import { config } from '../config.js';
import { retainedRange, type HistoryRange } from './history-range.js';
import type { HistoryRepository } from './history.repository.js';

/** Made ahead hourly: maintenance may stop this long before rows land in DEFAULT (still inserted, moved in later). */
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

  /** Drops partitions past retention, makes missing days up to DAYS_AHEAD moving DEFAULT rows in; a row lives its retention + at most a day. */
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
