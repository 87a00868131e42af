import type { DataSource, EntityManager } from 'typeorm';
import type { Page } from '../lib/pagination.js';
import { column, rowShape, SqlValue, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { TenantEvents } from './webhook-endpoint.entity.js';
import type { WebhookEndpointChanges, WebhookEndpointInput, WebhookEndpointsQuery } from './webhook-endpoints.schemas.js';
import type { Reads } from '../lib/reads.js';

/** Never selects the secret (write-only), only whether there is one. */
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
  rate_limit_per_second: column<number | null>(),
  tenant_events: column<TenantEvents>(),
  tenant_ids: column<string[]>(),
  secret_rotation: column<{ previous_expires_at: string } | null>(
    "CASE WHEN previous_secret_expires_at > now() THEN json_build_object('previous_expires_at', iso_utc(previous_secret_expires_at)) END",
  ),
  created_at: column<Date>(),
});

/** Written, never selected. */
const writeOnly = {
  secret: column<string>(),
  previous_secret: column<string | null>(),
  previous_secret_expires_at: column<Date | null>(),
  failing_since: column<Date | null>(),
};

/** An endpoint as selected, without secrets. */
export type WebhookEndpointRow = RowOf<typeof endpointRow.columns>;
/** CONTRACT.md "Webhook endpoint": never the secret, only `has_secret`. */
export type WebhookEndpointView = Presented<WebhookEndpointRow>;

/** Ends the streak only of a disabled endpoint (SET sees the old row): repeating `disabled: false` cannot keep a failing one from being disabled. */
const END_STREAK_IF_DISABLED = new SqlValue('CASE WHEN disabled THEN NULL ELSE failing_since END');

/** A secret replaced at once: nothing of the one before signs any more. */
const NO_PREVIOUS_SECRET = { previous_secret: null, previous_secret_expires_at: null };

/** Webhook endpoints, always scoped by the acting organization. */
export class WebhookEndpointsRepository {
  private readonly table: OrgResourceRepository<typeof endpointRow.columns, never, typeof writeOnly>;

  constructor(
    private readonly dataSource: DataSource,
    reads?: Reads,
  ) {
    this.table = new OrgResourceRepository(dataSource, { shape: endpointRow, resource: 'webhook_endpoint', idPrefix: 'whe', writeOnly }, reads);
  }

  /** snake_case name, as in 404 `webhook_endpoint_not_found`. */
  get resource(): string {
    return this.table.resource;
  }

  create(orgId: string, input: WebhookEndpointInput): Promise<WebhookEndpointView> {
    return this.table.create(orgId, input);
  }

  /** Newest first. */
  list(orgId: string, query: WebhookEndpointsQuery): Promise<Page<WebhookEndpointView>> {
    return this.table.list(orgId, query);
  }

  /** 404 `webhook_endpoint_not_found` when the organization has none. */
  find(orgId: string, id: string): Promise<WebhookEndpointRow> {
    return this.table.findRow(this.dataSource.manager, orgId, id);
  }

  /** As `find`, locked FOR UPDATE in `em`'s transaction. */
  findForUpdate(em: EntityManager, orgId: string, id: string): Promise<WebhookEndpointRow> {
    return this.table.findRow(em, orgId, id, true);
  }

  /** Of any organization. */
  async exists(id: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(`SELECT 1 FROM ${endpointRow.table} WHERE id = $1`, [id]);
    return rows.length > 0;
  }

  /**
   * 404 when the organization has none. Re-enabling ends the failure streak, so
   * WEBHOOK_DISABLE_AFTER_HOURS counts afresh; a new `secret` ends any rotation's overlap.
   */
  update(em: EntityManager, orgId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointRow> {
    return this.table.updateRow(em, orgId, id, {
      ...changes,
      ...(changes.disabled === false ? { failing_since: END_STREAK_IF_DISABLED } : {}),
      ...(changes.secret !== undefined ? NO_PREVIOUS_SECRET : {}),
    });
  }

  /** The replaced secret signs too for `overlapSeconds` by the database's clock (the delivery path reads it too); 0: forgotten at once. */
  rotateSecret(em: EntityManager, orgId: string, id: string, secret: string, overlapSeconds: number): Promise<WebhookEndpointRow> {
    // SET reads the row as it was: the previous secret is the one being replaced.
    const previous =
      overlapSeconds > 0
        ? { previous_secret: new SqlValue('secret'), previous_secret_expires_at: new SqlValue('now() + make_interval(secs => ?)', [overlapSeconds]) }
        : NO_PREVIOUS_SECRET;
    return this.table.updateRow(em, orgId, id, { secret, ...previous });
  }

  /** Forgets previous secrets whose overlap ended (a secret no longer needed is not kept); returns how many. */
  async forgetExpiredSecrets(): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      `UPDATE ${endpointRow.table} SET previous_secret = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at <= now()`,
    );
    return count;
  }

  /** 404 when the organization has none. */
  async remove(orgId: string, id: string): Promise<void> {
    await this.table.deleteRow(this.dataSource.manager, orgId, id);
  }
}
