import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { retainedHistory } from '../history/history-partitions.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { NotFoundError } from '../lib/errors.js';
import type { DeliveryFilters } from './webhook-deliveries.schemas.js';
import type { WebhookJobs } from './webhook.jobs.js';

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event: string;
  call_id: string;
  sequence: number;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_response_status: number | null;
  created_at: Date;
  attempts: Array<{ delivery_id: string; attempted_at: string; response_status: number | null; duration_ms: number; error: string | null }>;
}

// Attempts are gathered per delivery in the same query, oldest first, each delivery's from its
// own day (the partition key it shares with them).
const COLUMNS = `d.id, d.endpoint_id, d.event, d.call_id, d.sequence, d.status, d.attempt_count, d.next_attempt_at,
  d.last_response_status, d.created_at,
  COALESCE((SELECT json_agg(json_build_object('delivery_id', a.id, 'attempted_at', iso_utc(a.attempted_at), 'response_status', a.response_status,
                                              'duration_ms', a.duration_ms, 'error', a.error) ORDER BY a.attempted_at)
              FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.delivery_created_at = d.created_at), '[]'::json) AS attempts`;

/** CONTRACT.md "Webhook delivery". */
const present = (d: DeliveryRow) => ({
  id: d.id,
  endpoint_id: d.endpoint_id,
  event: d.event,
  call_id: d.call_id,
  sequence: d.sequence,
  status: d.status,
  attempt_count: d.attempt_count,
  next_attempt_at: d.next_attempt_at?.toISOString() ?? null,
  last_response_status: d.last_response_status,
  created_at: d.created_at.toISOString(),
  attempts: d.attempts,
});

/**
 * The delivery log and support tools (SPEC.md §2.6, §4.4). What is shown is what
 * WEBHOOK_RETENTION_DAYS keeps: every read is bounded to it, so it reads the retained days'
 * partitions only. A list, newest first, reads day by day from the newest and stops once its
 * page is full; a delivery by id alone (ids say nothing of time) is looked for in each retained
 * day, one primary-key probe per day (31 of them by default).
 */
export class WebhookDeliveriesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly jobs: WebhookJobs,
  ) {}

  list(actor: Actor, query: PageParams & DeliveryFilters): Promise<Page<ReturnType<typeof present>>> {
    const retained = retainedHistory('webhook_deliveries');
    const filters = where('d.org_id = ? AND d.created_at >= ? AND d.created_at <= ?', actor.org.id, retained.from, retained.to).matching(query, {
      endpoint_id: 'd.endpoint_id',
      status: 'd.status',
      call_id: 'd.call_id',
      event: 'd.event',
    });
    return listPage(this.dataSource, { select: COLUMNS, from: 'webhook_deliveries d', where: filters }, query, present);
  }

  async get(actor: Actor, id: string) {
    return present(await this.find(actor, id));
  }

  /** Sends it again now, as a new attempt, whatever its status; answers 202 with the delivery. */
  async retry(actor: Actor, id: string) {
    const delivery = await this.find(actor, id);
    await this.jobs.retryNow(id, delivery.created_at);
    return present(delivery);
  }

  private async find(actor: Actor, id: string): Promise<DeliveryRow> {
    const retained = retainedHistory('webhook_deliveries');
    const [row] = await this.dataSource.query(`SELECT ${COLUMNS} FROM webhook_deliveries d WHERE d.id = $1 AND d.org_id = $2 AND d.created_at >= $3 AND d.created_at <= $4`, [
      id,
      actor.org.id,
      retained.from,
      retained.to,
    ]);
    if (!row) throw new NotFoundError('webhook_delivery');
    return row;
  }

  /** Re-sends, in the background, every `failed` delivery of an endpoint since `since`. */
  async recover(actor: Actor, endpointId: string, since: Date) {
    const [endpoint] = await this.dataSource.query('SELECT id FROM webhook_endpoints WHERE id = $1 AND org_id = $2', [endpointId, actor.org.id]);
    if (!endpoint) throw new NotFoundError('webhook_endpoint');
    await this.jobs.recover(endpointId, since);
    return { endpoint_id: endpointId, since: since.toISOString(), status: 'accepted' };
  }
}
