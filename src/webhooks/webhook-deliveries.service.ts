import type { Actor } from '../auth/actor.js';
import { retainedHistory } from '../history/history-partitions.js';
import { NotFoundError } from '../lib/errors.js';
import type { Page, PageParams } from '../lib/pagination.js';
import { presentRow } from '../lib/sql.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { requireOwnTenants } from '../orgs/own-tenants.js';
import type { DeliveryFilters } from './webhook-deliveries.schemas.js';
import type { DeliveryLogRepository, DeliveryRow, DeliveryView, FailedFilter } from './delivery-log.repository.js';
import type { FailedDeliveryBoard } from './failed-delivery-board.js';
import { refuseInsideTenant } from './tenant-events.js';
import type { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import type { WebhookJobs } from './webhook.jobs.js';

/** Failed deliveries made due again per statement in a bulk retry. */
const RETRY_BATCH = 500;

/**
 * The delivery log and support tools (SPEC.md §2.6, §4.4). Every read is bounded to the retained
 * days' partitions; ids say nothing of time, so a lookup by id probes each retained day.
 */
export class WebhookDeliveriesService {
  constructor(
    private readonly deliveries: DeliveryLogRepository,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly jobs: WebhookJobs,
    private readonly board: Pick<FailedDeliveryBoard, 'clear' | 'retryNow'>,
    private readonly orgs: Pick<OrganizationsRepository, 'tenantIdsAmong'>,
  ) {}

  /** `tenant_id` (CONTRACT.md §5): one of the caller's tenants, the caller acting as itself. */
  async list(actor: Actor, query: PageParams & DeliveryFilters): Promise<Page<DeliveryView>> {
    if (query.tenant_id !== undefined) {
      refuseInsideTenant(actor, { tenant_id: query.tenant_id });
      await requireOwnTenants(this.orgs, actor.org.id, query.tenant_id, 'tenant_id');
    }
    return this.deliveries.list(actor.org.id, retainedHistory('webhook_deliveries'), query);
  }

  async get(actor: Actor, id: string): Promise<DeliveryView> {
    return presentRow(await this.find(actor, id));
  }

  /** Queues a new attempt now, whatever its status. */
  async retry(actor: Actor, id: string): Promise<DeliveryView> {
    const delivery = await this.find(actor, id);
    await this.board.retryNow(id, delivery.created_at);
    return presentRow(delivery);
  }

  private async find(actor: Actor, id: string): Promise<DeliveryRow> {
    const row = await this.deliveries.find(actor.org.id, id, retainedHistory('webhook_deliveries'));
    if (!row) throw new NotFoundError('webhook_delivery');
    return row;
  }

  /** Queues re-sending every `failed` delivery of the endpoint since `since`. */
  async recover(actor: Actor, endpointId: string, since: Date) {
    await this.endpoints.find(actor.org.id, endpointId);
    await this.jobs.recover(endpointId, since);
    return { endpoint_id: endpointId, since: since.toISOString(), status: 'accepted' };
  }

  /** The `recover` job; null when the endpoint was deleted since. */
  async recoverNow(endpointId: string, since: Date): Promise<number | null> {
    if (!(await this.endpoints.exists(endpointId))) return null;
    return this.retryFailed({ endpointId, since });
  }

  /** Failed deliveries `filter` matches among those retained. */
  countFailed(filter: FailedFilter): Promise<number> {
    return this.deliveries.countFailed(filter, retainedHistory('webhook_deliveries'));
  }

  /** Makes failed deliveries due again and takes them off the dashboard's failed list; returns how many. */
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
