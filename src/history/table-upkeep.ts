import { HISTORY_TABLES } from './history-partitions.js';
import type { HistoryRepository } from './history.repository.js';

/**
 * The tables written all day: `calls` (four status changes each), `organizations` (the payer's
 * balance row, once per ending batch), `api_keys` (last use), `usage_buckets` (the rollup's hourly
 * rows, which the 366-day usage read plans on: on stale statistics it read the whole table), and
 * today's and yesterday's partitions of the history tables (an event is relayed, a delivery claimed
 * and answered after it was written).
 */
const HOT_TABLES = ['calls', 'organizations', 'api_keys', 'usage_buckets'];

/** `<table>_pYYYYMMDD`, the partition of `day` (UTC), as history_partitions_create names it. */
const partitionOf = (table: string, day: Date) => `${table}_p${day.toISOString().slice(0, 10).replaceAll('-', '')}`;

/**
 * Vacuums and analyzes the hot tables when the server's autovacuum is off, each when autovacuum
 * would (the maintenance worker's job every minute). Without it, nothing removes their dead rows and nothing gives the
 * planner statistics: a fresh database, and each day's new partition, keep their first plans while
 * every status change leaves a dead row behind, and the cost per call rose minute by minute
 * (`npm run bench:load`, soak). With autovacuum on (the default, and every managed Postgres), it
 * does nothing: autovacuum analyzes a new partition within its naptime.
 */
export class TableUpkeep {
  constructor(private readonly repository: Pick<HistoryRepository, 'autovacuumOn' | 'vacuumAnalyze'>) {}

  async run(now = new Date()): Promise<{ done: string[] } | { skipped: string }> {
    if (await this.repository.autovacuumOn()) return { skipped: 'autovacuum is on' };
    const yesterday = new Date(now.getTime() - 86_400_000);
    const tables = [...HOT_TABLES, ...HISTORY_TABLES.flatMap(({ table }) => [partitionOf(table, now), partitionOf(table, yesterday)])];
    return { done: await this.repository.vacuumAnalyze(tables) };
  }
}
