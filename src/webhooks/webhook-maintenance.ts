import type { DataSource } from 'typeorm';
import { config } from '../config.js';
import { DELIVERIES_CHANNEL } from './relay.js';
import type { WebhookJobs } from './webhook.jobs.js';

/** Which failed deliveries to send again. */
export interface FailedFilter {
  endpointId?: string;
  orgId?: string;
  since?: Date;
  until?: Date;
}

function failedWhere(filter: FailedFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const clauses = [`status = 'failed'`];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    clauses.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.endpointId) add('endpoint_id = ?', filter.endpointId);
  if (filter.orgId) add('org_id = ?', filter.orgId);
  if (filter.since) add('created_at >= ?', filter.since);
  if (filter.until) add('created_at < ?', filter.until);
  return { where: clauses.join(' AND '), params };
}

export async function countFailed(dataSource: DataSource, filter: FailedFilter): Promise<number> {
  const { where, params } = failedWhere(filter);
  const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`, params);
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
      `UPDATE webhook_deliveries SET status = 'retrying', next_attempt_at = now(), updated_at = now()
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE ${where} ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      params,
    );
    if (rows.length === 0) return total;
    await dataSource.query(`SELECT pg_notify($1, '')`, [DELIVERIES_CHANNEL]);
    await jobs.clearFailed(rows.map((d) => d.id));
    total += rows.length;
    onBatch(rows.length);
  }
}

/** Deletes delivery records (and their attempts) older than WEBHOOK_RETENTION_DAYS. */
export async function purgeOldDeliveries(dataSource: DataSource): Promise<number> {
  const [, count] = await dataSource.query(`DELETE FROM webhook_deliveries WHERE created_at < now() - make_interval(days => $1)`, [
    config.webhook.retentionDays,
  ]);
  return count;
}
