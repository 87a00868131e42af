import type { DataSource } from 'typeorm';
import { retainedHistory } from '../history/history-partitions.js';
import { DELIVERIES_CHANNEL } from './relay.js';
import type { WebhookJobs } from './webhook.jobs.js';

/** Which failed deliveries to send again. */
export interface FailedFilter {
  endpointId?: string;
  orgId?: string;
  since?: Date;
  until?: Date;
}

/**
 * The condition on deliveries (as `alias`) and its parameters. It always bounds `created_at`,
 * by the filter or else by what is retained, so that only those days' partitions are read.
 */
function failedWhere(filter: FailedFilter): { where: (alias: string) => string; params: unknown[] } {
  const retained = retainedHistory('webhook_deliveries');
  const params: unknown[] = [filter.since ?? retained.from, filter.until ?? retained.to];
  const clauses = [`status = 'failed'`, 'created_at >= $1', filter.until ? 'created_at < $2' : 'created_at <= $2'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    clauses.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.endpointId) add('endpoint_id = ?', filter.endpointId);
  if (filter.orgId) add('org_id = ?', filter.orgId);
  return { where: (alias) => clauses.map((c) => `${alias}.${c}`).join(' AND '), params };
}

export async function countFailed(dataSource: DataSource, filter: FailedFilter): Promise<number> {
  const { where, params } = failedWhere(filter);
  const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries d WHERE ${where('d')}`, params);
  return n;
}

/**
 * Makes failed deliveries due again now, from their next attempt on, `batch` at a time, and
 * takes them off the dashboard's failed list; the webhooks workers are notified. `onBatch`
 * reports progress. Used by the endpoint's `recover` route and the ops command line.
 */
export async function retryFailed(dataSource: DataSource, jobs: WebhookJobs, filter: FailedFilter, onBatch: (n: number) => void = () => undefined, batch = 500): Promise<number> {
  const { where, params } = failedWhere(filter);
  let total = 0;
  for (;;) {
    const [rows]: [Array<{ id: string }>] = await dataSource.query(
      `UPDATE webhook_deliveries d SET status = 'retrying', next_attempt_at = now(), updated_at = now()
         FROM (SELECT f.id, f.created_at FROM webhook_deliveries f WHERE ${where('f')} ORDER BY f.created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) f
        WHERE d.id = f.id AND d.created_at = f.created_at AND ${where('d')}
        RETURNING d.id`,
      params,
    );
    if (rows.length === 0) return total;
    await dataSource.query(`SELECT pg_notify($1, '')`, [DELIVERIES_CHANNEL]);
    await jobs.clearFailed(rows.map((d) => d.id));
    total += rows.length;
    onBatch(rows.length);
  }
}
