import type { DataSource } from 'typeorm';
import { config } from '../config.js';
import type { WebhookJobs } from './webhook.jobs.js';

/**
 * Postgres is the source of truth: every delivery that is due and has been for a few seconds
 * gets its job (re)queued. Its job id is fixed per attempt, so a delivery whose job is alive is
 * not queued twice; one whose job vanished (Redis lost it, it was never queued) is.
 */
export async function sweepDeliveries(dataSource: DataSource, jobs: WebhookJobs): Promise<number> {
  const due: Array<{ id: string; attempt_count: number }> = await dataSource.query(
    `SELECT d.id, d.attempt_count FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now() - interval '5 seconds' AND NOT w.disabled
      ORDER BY d.next_attempt_at LIMIT 5000`,
  );
  await jobs.deliver(due.map((d) => ({ deliveryId: d.id, attempt: d.attempt_count + 1 })));
  return due.length;
}

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
 * Makes failed deliveries due again now, from their next attempt on, `batch` at a time;
 * `onBatch` reports progress. Used by the endpoint's `recover` route and the ops command line.
 */
export async function retryFailed(dataSource: DataSource, jobs: WebhookJobs, filter: FailedFilter, onBatch: (n: number) => void = () => undefined, batch = 500): Promise<number> {
  const { where, params } = failedWhere(filter);
  let total = 0;
  for (;;) {
    const [rows]: [Array<{ id: string; attempt_count: number }>] = await dataSource.query(
      `UPDATE webhook_deliveries SET status = 'retrying', next_attempt_at = now(), updated_at = now()
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE ${where} ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        RETURNING id, attempt_count`,
      params,
    );
    if (rows.length === 0) return total;
    await jobs.deliver(rows.map((d) => ({ deliveryId: d.id, attempt: d.attempt_count + 1 })));
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
