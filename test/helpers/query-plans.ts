import pg from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { config } from '../../src/config.js';
import { db } from './db.js';

/** A statement the code ran, and the plan Postgres executed for it. */
export interface RecordedPlan {
  sql: string;
  plan: PlanNode;
}

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/**
 * Connections that record the plan of every statement the code sends through them: before it
 * runs, the same statement with the same parameters is run under EXPLAIN (ANALYZE, FORMAT
 * JSON) and rolled back (in a savepoint inside a transaction), so the plan is the one Postgres
 * executes, with partitions pruned when planning, when starting and while running (an
 * ordered scan of partitions that stops once its LIMIT is met leaves the rest unexecuted).
 * Then the statement runs for real, so the code goes on exactly as it would.
 */
export class QueryPlans {
  readonly recorded: RecordedPlan[] = [];
  private readonly client: typeof pg.Client;

  constructor() {
    const recorded = this.recorded;
    this.client = class PlanRecordingClient extends pg.Client {
      private inTransaction = false;

      override query(...args: any[]): any {
        if (typeof args[0]?.submit === 'function') return (super.query as (...a: any[]) => any)(...args);
        // TypeORM uses the promise form, pg's pool the callback form.
        const callback = typeof args.at(-1) === 'function' ? args.pop() : null;
        const result = this.explainThenRun(args);
        if (!callback) return result;
        result.then(
          (res) => callback(null, res),
          (err) => callback(err),
        );
      }

      private async explainThenRun(args: any[]): Promise<unknown> {
        const run = (...a: any[]) => (super.query as (...b: any[]) => Promise<any>)(...a);
        const text: string = typeof args[0] === 'string' ? args[0] : args[0].text;
        const values: unknown[] | undefined = typeof args[0] === 'string' ? args[1] : (args[0].values ?? args[1]);
        if (/^\s*(START TRANSACTION|BEGIN)\b/i.test(text)) this.inTransaction = true;
        else if (/^\s*(COMMIT|ROLLBACK)\s*$/i.test(text)) this.inTransaction = false;
        else if (/^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(text)) {
          await run(this.inTransaction ? 'SAVEPOINT plan' : 'BEGIN');
          try {
            const { rows } = await run(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
            recorded.push({ sql: text, plan: rows[0]['QUERY PLAN'][0].Plan });
          } finally {
            await run(this.inTransaction ? 'ROLLBACK TO SAVEPOINT plan' : 'ROLLBACK');
          }
        }
        return run(...args);
      }
    };
  }

  /** A pg pool (one connection) whose statements are recorded. */
  pool(): pg.Pool {
    return new pg.Pool({ connectionString: config.databaseUrl, max: 1, Client: this.client });
  }

  /** A DataSource like the app's (one connection) whose statements are recorded. */
  async dataSource(): Promise<DataSource> {
    const options = db.options as PostgresDataSourceOptions;
    return new DataSource({ ...options, extra: { ...options.extra, max: 1, Client: this.client } }).initialize();
  }

  /** The plan of the last statement recorded whose text holds `fragment`. */
  last(fragment: string): PlanNode {
    const found = [...this.recorded].reverse().find((r) => r.sql.includes(fragment));
    if (!found) throw new Error(`no statement holding "${fragment}" was recorded; recorded:\n${this.recorded.map((r) => r.sql.slice(0, 120)).join('\n')}`);
    return found.plan;
  }
}

/** The tables a plan read (scan nodes executed at least once), sorted. */
export function tablesRead(plan: PlanNode): string[] {
  const read = new Set<string>();
  const walk = (node: PlanNode) => {
    if (node['Node Type'].endsWith('Scan') && node['Relation Name'] && (node['Actual Loops'] ?? 0) > 0) read.add(node['Relation Name']);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return [...read].sort();
}
