import type { DataSource, EntityManager } from 'typeorm';
import { listPage, type Page } from '../lib/pagination.js';
import { column, presentRow, rowShape, where, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
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
  field_aliases: column<Record<string, string>>(),
  extra_payload: column<Record<string, unknown>>(),
  custom_headers: column<Record<string, string>>(),
  disabled: column<boolean>(),
  created_at: column<Date>(),
});

/** An endpoint as selected (see `endpointRow`). */
export type WebhookEndpointRow = RowOf<typeof endpointRow.columns>;
/** CONTRACT.md "Webhook endpoint": never the secret, only `has_secret`. */
export type WebhookEndpointView = Presented<WebhookEndpointRow>;

/** What an update writes: the request's changes, plus the failure streak a re-enable ends. */
type EndpointUpdate = WebhookEndpointChanges & { failing_since?: () => string };

/**
 * SQL for `failing_since` on `disabled: false`: the streak ends when the endpoint was
 * disabled (SET sees the row as it was); an endpoint already enabled keeps its streak, so
 * sending `disabled: false` again and again cannot keep a failing endpoint from being disabled.
 */
const END_STREAK_IF_DISABLED = () => 'CASE WHEN disabled THEN NULL ELSE failing_since END';

/** The organizations' webhook endpoints (webhook_endpoints), always scoped by the acting organization. */
export class WebhookEndpointsRepository {
  private readonly table = new OrgResourceTable<WebhookEndpoint, WebhookEndpointRow, WebhookEndpointView, WebhookEndpointInput, EndpointUpdate, WebhookEndpointsQuery>({
    entity: WebhookEndpoint,
    table: endpointRow.table,
    resource: 'webhook_endpoint',
    idPrefix: 'whe',
    columns: endpointRow.select(),
    present: presentRow,
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

  constructor(private readonly dataSource: DataSource) {}

  /** snake_case name: an unknown id is 404 `webhook_endpoint_not_found`. */
  get resource(): string {
    return this.table.resource;
  }

  /** A new endpoint of the organization, as the API shows it. */
  create(orgId: string, input: WebhookEndpointInput): Promise<WebhookEndpointView> {
    return this.table.insert(this.dataSource.manager, orgId, input);
  }

  /** A page of the organization's endpoints, newest first. */
  list(orgId: string, query: WebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
    return listPage(this.dataSource, { select: endpointRow.select(), from: endpointRow.from(), where: where('org_id = ?', orgId) }, query, presentRow<WebhookEndpointRow>);
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
    const update = changes.disabled === false ? { ...changes, failing_since: END_STREAK_IF_DISABLED } : changes;
    return this.table.updateRow(em, orgId, id, update);
  }

  /** Deletes the organization's endpoint with this id; 404 when it has none. */
  async remove(orgId: string, id: string): Promise<void> {
    await this.table.deleteRow(this.dataSource.manager, orgId, id);
  }
}
