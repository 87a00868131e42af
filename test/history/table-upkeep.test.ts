// The maintenance worker's `table-upkeep`: where the server's autovacuum is off (as on this
// project's CI machine), the hot tables are vacuumed and analyzed by Ringlane itself, so their dead
// rows go and the planner has statistics for them and for each day's new partitions (by
// autovacuum's own thresholds: calls, organizations, api_keys and the days being written).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { HistoryRepository } from '../../src/history/history.repository.js';
import { TableUpkeep } from '../../src/history/table-upkeep.js';
import { db } from '../helpers/db.js';

interface TableStats {
  relname: string;
  last_vacuum: Date | null;
  last_analyze: Date | null;
}

async function stats(tables: string[]): Promise<Map<string, TableStats>> {
  const rows = await db.query<TableStats[]>(`SELECT relname, last_vacuum, last_analyze FROM pg_stat_user_tables WHERE relname = ANY($1)`, [tables]);
  return new Map(rows.map((r) => [r.relname, r]));
}

describe('table upkeep (the maintenance worker, every minute)', () => {
  it('vacuums and analyzes a hot table grown past autovacuum’s thresholds when autovacuum is off, as autovacuum would; leaves it to autovacuum when it is on', async () => {
    const repository = new HistoryRepository(db);
    const tag = `org_upkeep${randomUUID().slice(0, 8)}`;
    // Rows inserted past autovacuum's insert threshold (1,000 + 20% of the live rows): a vacuum is due,
    // and an analyze (10% changed). Counters reach pg_stat_user_tables within a second of the commit.
    const [{ live }] = await db.query<Array<{ live: number }>>(`SELECT n_live_tup::int AS live FROM pg_stat_user_tables WHERE relname = 'organizations'`);
    const rows = Math.ceil((1000 + 0.2 * live) / 0.8) + 100;
    await db.query(`INSERT INTO organizations (id, name) SELECT $1 || '_' || i, 'Upkeep' FROM generate_series(1, $2::int) AS i`, [tag, rows]);
    for (let tries = 0; ; tries++) {
      const [row] = await db.query<Array<{ inserted: number; live: number }>>(
        `SELECT n_ins_since_vacuum::int AS inserted, n_live_tup::int AS live FROM pg_stat_user_tables WHERE relname = 'organizations'`,
      );
      if (row.inserted > 1000 + 0.2 * row.live || tries > 50) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const hot = ['organizations'];
    const before = new Date();

    const result = await new TableUpkeep(repository).run();

    if (await repository.autovacuumOn()) {
      expect(result).to.deep.equal({ skipped: 'autovacuum is on' });
      await db.query(`DELETE FROM organizations WHERE id LIKE $1 || '%'`, [tag]);
      return;
    }
    expect(result).to.have.property('done').that.includes('vacuum+analyze organizations');
    const after = await stats(hot);
    for (const table of hot) {
      expect(after.get(table)?.last_vacuum, `${table} vacuumed`).to.be.at.least(before);
      expect(after.get(table)?.last_analyze, `${table} analyzed`).to.be.at.least(before);
    }
    // The planner knows the tables now: never-analyzed ones have reltuples -1.
    const [{ reltuples }] = await db.query<Array<{ reltuples: number }>>(`SELECT reltuples FROM pg_class WHERE relname = 'organizations'`);
    expect(reltuples).to.be.at.least(rows);
    await db.query(`DELETE FROM organizations WHERE id LIKE $1 || '%'`, [tag]);
  });
});
