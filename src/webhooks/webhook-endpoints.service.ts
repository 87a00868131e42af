import { DELIVERIES_CHANNEL } from './relay.js';
import { PAUSE_OR_RESUME } from './webhook-delivery.repository.js';
import type { Actor } from '../auth/actor.js';
import type { Page } from '../lib/pagination.js';
import type { ResourceService } from '../http/resource-routes.js';
import { db } from '../lib/db.js';
import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { assertCustomization, type WebhookEndpointChanges, type WebhookEndpointInput, type WebhookEndpointsQuery } from './webhook-endpoints.schemas.js';

/** CONTRACT.md "Webhook endpoint": never the secret, only `has_secret`. */
export interface WebhookEndpointView {
  id: string;
  name: string;
  url: string;
  has_secret: boolean;
  outcomes: string[];
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
  custom_headers: Record<string, string>;
  disabled: boolean;
  created_at: string;
}

/** The row as selected: the view, with the time still a Date. */
type WebhookEndpointRow = Omit<WebhookEndpointView, 'created_at'> & { created_at: Date };

const presentWebhookEndpoint = ({ created_at, ...rest }: WebhookEndpointRow): WebhookEndpointView => ({
  ...rest,
  created_at: created_at.toISOString(),
});

/** What an update writes: the request's changes, plus the failure streak a re-enable ends. */
type EndpointUpdate = WebhookEndpointChanges & { failing_since?: () => string };

/**
 * SQL for `failing_since` on `disabled: false`: the streak ends when the endpoint was
 * disabled (SET sees the row as it was); an endpoint already enabled keeps its streak, so
 * sending `disabled: false` again and again cannot keep a failing endpoint from being disabled.
 */
const END_STREAK_IF_DISABLED = () => 'CASE WHEN disabled THEN NULL ELSE failing_since END';

/**
 * The rows, always scoped by the acting organization. The secret is written but never read
 * back: the columns hold only whether there is one.
 */
const endpointsTable = new OrgResourceTable<WebhookEndpoint, WebhookEndpointRow, WebhookEndpointView, WebhookEndpointInput, EndpointUpdate, WebhookEndpointsQuery>({
  entity: WebhookEndpoint,
  table: 'webhook_endpoints',
  resource: 'webhook_endpoint',
  idPrefix: 'whe',
  columns: "id, name, url, (secret <> '') AS has_secret, outcomes, field_aliases, extra_payload, custom_headers, disabled, created_at",
  present: presentWebhookEndpoint,
  fields: {
    name: 'name',
    url: 'url',
    secret: 'secret',
    outcomes: 'outcomes',
    field_aliases: 'fieldAliases',
    extra_payload: 'extraPayload',
    custom_headers: 'customHeaders',
    disabled: 'disabled',
    failing_since: 'failingSince',
  },
});

/**
 * The organization's webhook endpoints (SPEC.md §2.5, §4.4). Re-enabling a disabled one
 * (`disabled: false`) also ends its failure streak (`failing_since`), so the delivery worker
 * measures `WEBHOOK_DISABLE_AFTER_HOURS` afresh from the next failure.
 */
export class WebhookEndpointsService implements ResourceService<WebhookEndpointInput, WebhookEndpointChanges, WebhookEndpointsQuery, WebhookEndpointView> {
  readonly resource = endpointsTable.resource;

  constructor(private readonly table = endpointsTable) {}

  create(actor: Actor, input: WebhookEndpointInput): Promise<WebhookEndpointView> {
    return this.table.create(actor, input);
  }

  list(actor: Actor, query: WebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
    return this.table.list(actor, query);
  }

  read(actor: Actor, id: string): Promise<WebhookEndpointView> {
    return this.table.read(actor, id);
  }

  /**
   * A change of `field_aliases` or `extra_payload` is checked against the maps the endpoint
   * will have: the changed ones with the stored others (a new `extra_payload` can collide
   * with stored aliases). The row is read FOR UPDATE in the writing transaction, so two
   * concurrent changes, each fine against what it read, cannot together store a collision.
   * Other changes leave the maps alone and do not check them. Disabling an endpoint makes its
   * pending deliveries wait (not due); enabling it makes them due at once, and the webhooks
   * workers are told.
   */
  update(actor: Actor, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointView> {
    const update = changes.disabled === false ? { ...changes, failing_since: END_STREAK_IF_DISABLED } : changes;
    const mapsChange = changes.field_aliases !== undefined || changes.extra_payload !== undefined;
    if (!mapsChange && changes.disabled === undefined) return this.table.update(actor, id, update);
    return db.transaction(async (em) => {
      if (mapsChange) {
        const stored = await this.table.findRow(em, actor.org.id, id, true);
        assertCustomization(changes.field_aliases ?? stored.field_aliases, changes.extra_payload ?? stored.extra_payload);
      }
      const row = await this.table.updateRow(em, actor.org.id, id, update);
      if (changes.disabled !== undefined) {
        await em.query(PAUSE_OR_RESUME, [[id]]);
        await em.query(`SELECT pg_notify($1, '')`, [DELIVERIES_CHANNEL]);
      }
      return presentWebhookEndpoint(row);
    });
  }

  remove(actor: Actor, id: string): Promise<void> {
    return this.table.remove(actor, id);
  }
}

export const webhookEndpointsService = new WebhookEndpointsService();
