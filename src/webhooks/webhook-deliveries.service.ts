import type { Actor } from '../auth/actor.js';
import { retainedHistory } from '../history/history-partitions.js';
import { NotFoundError } from '../lib/errors.js';
import type { Page, PageParams } from '../lib/pagination.js';
import { presentRow } from '../lib/sql.js';
import type { DeliveryFilters } from './webhook-deliveries.schemas.js';
import type { DeliveryLogRepository, DeliveryRow, DeliveryView, FailedFilter } from './delivery-log.repository.js';
import type { FailedDeliveryBoard } from './failed-delivery-board.js';
import type { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import type { WebhookJobs } from './webhook.jobs.js';

/** Failed deliveries made due again per statement, when support retries them in bulk. */
const RETRY_BATCH = 500;

/**
 * The delivery log and support tools (SPEC.md §2.6, §4.4). What is shown is what
 * WEBHOOK_RETENTION_DAYS keeps: every read is bounded to it, so it reads the retained days'
 * partitions only. A list, newest first, reads day by day from the newest and stops once its
 * page is full; a delivery by id alone (ids say nothing of time) is looked for in each retained
 * day, one primary-key probe per day (31 of them by default).
 */
export class WebhookDeliveriesService {
  constructor(
    private readonly deliveries: DeliveryLogRepository,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly jobs: WebhookJobs,
    private readonly board: Pick<FailedDeliveryBoard, 'clear'>,
  ) {}

  list(actor: Actor, query: PageParams & DeliveryFilters): Promise<Page<DeliveryView>> {
    return this.deliveries.list(actor.org.id, retainedHistory('webhook_deliveries'), query);
  }

  async get(actor: Actor, id: string): Promise<DeliveryView> {
    return presentRow(await this.find(actor, id));
  }

  /** Sends it again now, as a new attempt, whatever its status; answers 202 with the delivery. */
  async retry(actor: Actor, id: string): Promise<DeliveryView> {
    const delivery = await this.find(actor, id);
    await this.jobs.retryNow(id, delivery.created_at);
    return presentRow(delivery);
  }

  private async find(actor: Actor, id: string): Promise<DeliveryRow> {
    const row = await this.deliveries.find(actor.org.id, id, retainedHistory('webhook_deliveries'));
    if (!row) throw new NotFoundError('webhook_delivery');
    return row;
  }

  /** Re-sends, in the background, every `failed` delivery of an endpoint since `since`. */
  async recover(actor: Actor, endpointId: string, since: Date) {
    await this.endpoints.find(actor.org.id, endpointId);
    await this.jobs.recover(endpointId, since);
    return { endpoint_id: endpointId, since: since.toISOString(), status: 'accepted' };
  }

  /**
   * The `recover` job: sends every failed delivery of the endpoint since `since` again (see
   * `retryFailed`); null when the endpoint no longer exists (deleted since recovery was asked for).
   */
  async recoverNow(endpointId: string, since: Date): Promise<number | null> {
    if (!(await this.endpoints.exists(endpointId))) return null;
    return this.retryFailed({ endpointId, since });
  }

  /** How many failed deliveries `filter` matches among those retained (unless it bounds them itself). */
  countFailed(filter: FailedFilter): Promise<number> {
    return this.deliveries.countFailed(filter, retainedHistory('webhook_deliveries'));
  }

  /**
   * Makes failed deliveries due again now, from their next attempt on, RETRY_BATCH at a time,
   * and takes them off the dashboard's failed list; the webhooks workers are notified.
   * `onBatch` reports progress. Used by the endpoint's `recover` job and the ops command line.
   */
  async retryFailed(filter: FailedFilter, onBatch: (n: number) => void = () => undefined): Promise<number> {
    const retained = retainedHistory('webhook_deliveries');
    let total = 0;
    for (;;) {
      const ids = await this.deliveries.retryFailed(filter, retained, RETRY_BATCH);
      if (ids.length === 0) return total;
      await this.board.clear(ids);
      total += ids.length;
      onBatch(ids.length);
    }
  }
}
