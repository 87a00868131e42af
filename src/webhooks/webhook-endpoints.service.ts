import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import type { ResourceService } from '../http/resource-routes.js';
import type { Page } from '../lib/pagination.js';
import { presentRow } from '../lib/sql.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { pauseOrResume } from './delivery-log.repository.js';
import { notifyDeliveries } from './delivery-notifications.js';
import { tenantSelection } from './tenant-events.js';
import type { WebhookEndpointsRepository, WebhookEndpointView } from './webhook-endpoints.repository.js';
import {
  assertCustomization,
  type SecretRotationInput,
  type WebhookEndpointChanges,
  type WebhookEndpointInput,
  type WebhookEndpointsQuery,
} from './webhook-endpoints.schemas.js';

/** The organization's webhook endpoints (SPEC.md §2.5, §4.4). */
export class WebhookEndpointsService implements ResourceService<WebhookEndpointInput, WebhookEndpointChanges, WebhookEndpointsQuery, WebhookEndpointView> {
  readonly resource: string;

  constructor(
    private readonly db: DataSource,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly orgs: Pick<OrganizationsRepository, 'tenantIdsAmong'>,
  ) {
    this.resource = endpoints.resource;
  }

  async create(actor: Actor, input: WebhookEndpointInput): Promise<WebhookEndpointView> {
    return this.endpoints.create(actor.org.id, { ...input, ...(await tenantSelection(actor, this.orgs, input, 'none')) });
  }

  list(actor: Actor, query: WebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
    return this.endpoints.list(actor.org.id, query);
  }

  async read(actor: Actor, id: string): Promise<WebhookEndpointView> {
    return presentRow(await this.endpoints.find(actor.org.id, id));
  }

  /**
   * Changed maps are checked with the stored others (new `extra_payload` can collide with stored
   * aliases), and `tenant_ids` alone with the stored `tenant_events` (`tenantSelection`), on a row
   * read FOR UPDATE so two concurrent changes cannot together store what neither may alone.
   */
  async update(actor: Actor, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointView> {
    const mapsChange = changes.field_aliases !== undefined || changes.extra_payload !== undefined;
    const selectionAlone = changes.tenant_ids !== undefined && changes.tenant_events === undefined;
    const readsStored = mapsChange || selectionAlone;
    if (!readsStored && changes.disabled === undefined) {
      const selection = await tenantSelection(actor, this.orgs, changes, 'none');
      return presentRow(await this.endpoints.update(this.db.manager, actor.org.id, id, { ...changes, ...selection }));
    }
    return this.db.transaction(async (em) => {
      const stored = readsStored ? await this.endpoints.findForUpdate(em, actor.org.id, id) : null;
      if (stored && mapsChange) assertCustomization(changes.field_aliases ?? stored.field_aliases, changes.extra_payload ?? stored.extra_payload);
      const selection = await tenantSelection(actor, this.orgs, changes, stored?.tenant_events ?? 'none', em);
      const row = await this.endpoints.update(em, actor.org.id, id, { ...changes, ...selection });
      if (changes.disabled !== undefined) {
        await pauseOrResume(em, [id]);
        await notifyDeliveries(em);
      }
      return presentRow(row);
    });
  }

  /** CONTRACT.md §4 "Webhook secret rotation". */
  async rotateSecret(actor: Actor, id: string, rotation: SecretRotationInput): Promise<WebhookEndpointView> {
    return presentRow(await this.endpoints.rotateSecret(this.db.manager, actor.org.id, id, rotation.secret, rotation.overlap_seconds));
  }

  /** For the maintenance worker's `purge-expired`; returns how many. */
  forgetExpiredSecrets(): Promise<number> {
    return this.endpoints.forgetExpiredSecrets();
  }

  remove(actor: Actor, id: string): Promise<void> {
    return this.endpoints.remove(actor.org.id, id);
  }
}
