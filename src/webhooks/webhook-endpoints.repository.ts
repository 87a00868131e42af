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
  rate_limit_per_second: column<number | null>(),
  secret_rotation: column<{ previous_expires_at: string } | null>(
    "CASE WHEN previous_secret_expires_at > now() THEN json_build_object('previous_expires_at', iso_utc(previous_secret_expires_at)) END",
  ),
  created_at: column<Date>(),
});

/**
 * Written, never selected: the secrets (the previous one signs too until it expires), and the
 * failure streak the delivery worker keeps.
 */
const writeOnly = {
  secret: column<string>(),
  previous_secret: column<string | null>(),
  previous_secret_expires_at: column<Date | null>(),
  failing_since: column<Date | null>(),
};

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

/** A secret replaced at once: nothing of the one before signs any more. */
const NO_PREVIOUS_SECRET = { previous_secret: null, previous_secret_expires_at: null };

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
   * delivery worker measures WEBHOOK_DISABLE_AFTER_HOURS afresh from the next failure. A new
   * `secret` replaces the secret at once, ending any rotation's overlap.
   */
  update(em: EntityManager, orgId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointRow> {
    return this.table.updateRow(em, orgId, id, {
      ...changes,
      ...(changes.disabled === false ? { failing_since: END_STREAK_IF_DISABLED } : {}),
      ...(changes.secret !== undefined ? NO_PREVIOUS_SECRET : {}),
    });
  }

  /**
   * Sets a new secret; the one it replaces keeps signing beside it for `overlapSeconds` (by
   * the database's clock, which the delivery path reads too), or is forgotten at once when 0.
   * A rotation during an overlap drops the secret before the current one. 404 when the
   * organization has no such endpoint.
   */
  rotateSecret(em: EntityManager, orgId: string, id: string, secret: string, overlapSeconds: number): Promise<WebhookEndpointRow> {
    // SET reads the row as it was: the previous secret is the one being replaced.
    const previous =
      overlapSeconds > 0
        ? { previous_secret: new SqlValue('secret'), previous_secret_expires_at: new SqlValue('now() + make_interval(secs => ?)', [overlapSeconds]) }
        : NO_PREVIOUS_SECRET;
    return this.table.updateRow(em, orgId, id, { secret, ...previous });
  }

  /**
   * Forgets the previous secrets whose overlap has ended: they sign nothing any more, and a
   * secret no longer needed is not kept. Returns how many.
   */
  async forgetExpiredSecrets(): Promise<number> {
    const [, count] = await this.dataSource.query(
      `UPDATE ${endpointRow.table} SET previous_secret = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at <= now()`,
    );
    return count;
  }

  /** Deletes the organization's endpoint with this id; 404 when it has none. */
  async remove(orgId: string, id: string): Promise<void> {
    await this.table.deleteRow(this.dataSource.manager, orgId, id);
  }
}
