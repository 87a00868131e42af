import type { DataSource, EntityManager } from 'typeorm';
import type { Page } from '../lib/pagination.js';
import { column, rowShape, SqlValue, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { WebhookEndpointChanges, WebhookEndpointInput, WebhookEndpointsQuery } from './webhook-endpoints.schemas.js';

/**
 * An endpoint as selected: never the secret (it is written but never read back), only
 * whether there is one.
 */
const endpointRow = rowShape('webhook_endpoints', {
  id: column<string>(),
  name: column<string>(),
  url: column<string>(),
  has_secret: column<boolean>("(secret <> '')"),
  outcomes: column<string[]>(),
  event_types: column<string[]>(),
  field_aliases: column<Record<string, string>>(),
  extra_payload: column<Record<string, unknown>>(),
  custom_headers: column<Record<string, string>>(),
  disabled: column<boolean>(),
  created_at: column<Date>(),
});

/** Written, never selected: the secret, and the failure streak the delivery worker keeps. */
const writeOnly = { secret: column<string>(), failing_since: column<Date | null>() };

/** An endpoint as selected (see `endpointRow`). */
export type WebhookEndpointRow = RowOf<typeof endpointRow.columns>;
/** CONTRACT.md "Webhook endpoint": never the secret, only `has_secret`. */
export type WebhookEndpointView = Presented<WebhookEndpointRow>;

/**
 * `failing_since` on `disabled: false`: the streak ends when the endpoint was disabled (SET sees
 * the row as it was); an endpoint already enabled keeps its streak, so sending `disabled: false`
 * again and again cannot keep a failing endpoint from being disabled.
 */
const END_STREAK_IF_DISABLED = new SqlValue('CASE WHEN disabled THEN NULL ELSE failing_since END');

/** The organizations' webhook endpoints (webhook_endpoints), always scoped by the acting organization. */
export class WebhookEndpointsRepository {
  private readonly table: OrgResourceRepository<typeof endpointRow.columns, never, typeof writeOnly>;

  constructor(private readonly dataSource: DataSource) {
    this.table = new OrgResourceRepository(dataSource, { shape: endpointRow, resource: 'webhook_endpoint', idPrefix: 'whe', writeOnly });
  }

  /** snake_case name: an unknown id is 404 `webhook_endpoint_not_found`. */
  get resource(): string {
    return this.table.resource;
  }

  /** A new endpoint of the organization, as the API shows it. */
  create(orgId: string, input: WebhookEndpointInput): Promise<WebhookEndpointView> {
    return this.table.create(orgId, input);
  }

  /** A page of the organization's endpoints, newest first. */
  list(orgId: string, query: WebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
    return this.table.list(orgId, query);
  }

  /** The organization's endpoint with this id; 404 `webhook_endpoint_not_found` when it has none. */
  find(orgId: string, id: string): Promise<WebhookEndpointRow> {
    return this.table.findRow(this.dataSource.manager, orgId, id);
  }

  /** As `find`, held (FOR UPDATE) until `em`'s transaction ends, for a write that depends on it. */
  findForUpdate(em: EntityManager, orgId: string, id: string): Promise<WebhookEndpointRow> {
    return this.table.findRow(em, orgId, id, true);
  }

  /** Whether an endpoint with this id exists (of any organization). */
  async exists(id: string): Promise<boolean> {
    const rows = await this.dataSource.query(`SELECT 1 FROM ${endpointRow.table} WHERE id = $1`, [id]);
    return rows.length > 0;
  }

  /**
   * Writes `changes` to the organization's endpoint and returns it; 404 when it has none.
   * `disabled: false` also ends the failure streak of an endpoint that was disabled, so the
   * delivery worker measures WEBHOOK_DISABLE_AFTER_HOURS afresh from the next failure.
   */
  update(em: EntityManager, orgId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointRow> {
    return this.table.updateRow(em, orgId, id, changes.disabled === false ? { ...changes, failing_since: END_STREAK_IF_DISABLED } : changes);
  }

  /** Deletes the organization's endpoint with this id; 404 when it has none. */
  async remove(orgId: string, id: string): Promise<void> {
    await this.table.deleteRow(this.dataSource.manager, orgId, id);
  }
}
