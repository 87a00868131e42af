import type { DataSource } from 'typeorm';

/** Dropping a partition takes the parent for an instant and queues every statement behind it; on timeout BullMQ retries. */
const LOCK_TIMEOUT = '2s';

/** Each call in a transaction of its own, waiting at most LOCK_TIMEOUT for its locks. */
export class HistoryRepository {
  constructor(private readonly dataSource: DataSource) {}

  dropOlderThan(table: string, days: number): Promise<number> {
    return this.locked(`SELECT history_partitions_drop($1, now() - $2 * interval '1 day') AS n`, [table, days]);
  }

  createDays(table: string, days: number, ahead: number): Promise<number> {
    return this.locked(
      `SELECT history_partitions_create($1, ((now() - $2 * interval '1 day') AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date + $3::int) AS n`,
      [table, days, ahead],
    );
  }

  /** Whether the server runs autovacuum (`SHOW autovacuum`). */
  async autovacuumOn(): Promise<boolean> {
    const [row] = await this.dataSource.query<Array<{ autovacuum: string }>>('SHOW autovacuum');
    return row.autovacuum === 'on';
  }

  /** `VACUUM (ANALYZE)` of each of `tables` that exists (outside a transaction, as VACUUM must be); returns those vacuumed. */
  async vacuumAnalyze(tables: string[]): Promise<string[]> {
    const existing = await this.dataSource.query<Array<{ name: string }>>(
      `SELECT c.relname AS name FROM pg_class c JOIN unnest($1::text[]) AS t(name) ON t.name = c.relname
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'`,
      [tables],
    );
    const names = existing.map((t) => t.name).sort();
    // Names come from pg_class, quoted all the same.
    if (names.length > 0) await this.dataSource.query(`VACUUM (ANALYZE) ${names.map((n) => `"${n.replaceAll('"', '""')}"`).join(', ')}`);
    return names;
  }

  private locked(sql: string, params: unknown[]): Promise<number> {
    return this.dataSource.transaction(async (em) => {
      await em.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      const [row] = await em.query<Array<{ n: number }>>(sql, params);
      return row.n;
    });
  }
}
