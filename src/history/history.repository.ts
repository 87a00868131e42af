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

  /**
   * Vacuums and analyzes those of `tables` that autovacuum would, by its default thresholds (20%
   * of the rows dead, or inserted since the last vacuum, plus 50 or 1,000; 10% changed since the
   * last analyze, plus 50), each outside a transaction as VACUUM must be. Returns what it did.
   */
  async vacuumAnalyze(tables: string[]): Promise<string[]> {
    const due = await this.dataSource.query<Array<{ name: string; vacuum: boolean; analyze: boolean }>>(
      `SELECT s.relname AS name,
              s.n_dead_tup > 50 + 0.2 * s.n_live_tup OR s.n_ins_since_vacuum > 1000 + 0.2 * s.n_live_tup AS vacuum,
              s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup AS analyze
         FROM pg_stat_user_tables s JOIN unnest($1::text[]) AS t(name) ON t.name = s.relname
        WHERE s.schemaname = 'public'
        ORDER BY s.relname`,
      [tables],
    );
    const done: string[] = [];
    for (const { name, vacuum, analyze } of due) {
      if (!vacuum && !analyze) continue;
      // The name is one pg_class gave, quoted.
      const table = `"${name.replaceAll('"', '""')}"`;
      await this.dataSource.query(vacuum ? `VACUUM ${analyze ? '(ANALYZE) ' : ''}${table}` : `ANALYZE ${table}`);
      done.push(`${vacuum ? 'vacuum' : ''}${vacuum && analyze ? '+' : ''}${analyze ? 'analyze' : ''} ${name}`);
    }
    return done;
  }

  private locked(sql: string, params: unknown[]): Promise<number> {
    return this.dataSource.transaction(async (em) => {
      await em.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      const [row] = await em.query<Array<{ n: number }>>(sql, params);
      return row.n;
    });
  }
}
