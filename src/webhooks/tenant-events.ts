import { isActingInTenant, type Actor } from '../auth/actor.js';
import { ForbiddenError, InvalidRequestError } from '../lib/errors.js';
import type { Sql } from '../lib/pagination.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { requireOwnTenants } from '../orgs/own-tenants.js';
import type { TenantEvents } from './webhook-endpoint.entity.js';

/** CONTRACT.md §5: an endpoint names at most 100 tenants. */
export const MAX_TENANT_IDS = 100;

/** An endpoint's reseller-wide fields as a request gives them (either may be absent). */
export interface TenantSelection {
  tenant_events?: TenantEvents;
  tenant_ids?: string[];
}

/**
 * CONTRACT.md §5: reseller-wide fields (`tenant_events`, `tenant_ids`, the delivery log's
 * `tenant_id`) are for a reseller acting as itself. Inside a tenant, each of `given` that is set
 * is 400 `invalid_request` naming it.
 */
export function refuseInsideTenant(actor: Actor, given: Record<string, unknown>): void {
  if (!isActingInTenant(actor)) return;
  const details = Object.keys(given)
    .filter((path) => given[path] !== undefined)
    .map((path) => ({ path, message: `"${path}" is for a reseller acting as itself: not inside a tenant (X-Tenant-Id)` }));
  if (details.length) throw new InvalidRequestError(`${details.map((d) => d.path).join(', ')}: not available inside a tenant.`, details);
}

/**
 * THE rule of an endpoint's reseller-wide fields (CONTRACT.md §5 "Reseller-wide webhook
 * endpoints"): what a create or PATCH giving `given` stores, `stored` being the endpoint's
 * `tenant_events` before it ('none' on create). In order:
 * - inside a tenant, either field: 400;
 * - ending with 'all' on an organization that is not a reseller: 403 `not_a_reseller`;
 * - `tenant_ids` names tenants only for 'all': a non-empty list ending with 'none' is 400, and
 *   setting 'none' empties the list (the endpoint is back to its organization's events alone);
 * - an id that is not one of the caller's tenants: 400 naming it (`requireOwnTenants`, in `sql`'s
 *   transaction when given, so a PATCH holding the endpoint's row takes no second connection).
 */
export async function tenantSelection(
  actor: Actor,
  orgs: Pick<OrganizationsRepository, 'tenantIdsAmong'>,
  given: TenantSelection,
  stored: TenantEvents,
  sql?: Sql,
): Promise<TenantSelection> {
  const { tenant_events: events, tenant_ids: ids } = given;
  if (events === undefined && ids === undefined) return {};
  refuseInsideTenant(actor, { tenant_events: events, tenant_ids: ids });
  const resulting = events ?? stored;
  if (resulting === 'all' && !actor.org.isReseller) {
    throw new ForbiddenError('not_a_reseller', "Tenant events are for reseller accounts' own endpoints; ask us to enable reseller access.");
  }
  if (resulting === 'none') {
    if (ids?.length) {
      throw new InvalidRequestError('tenant_ids: only with tenant_events "all".', [
        { path: 'tenant_ids', message: '"tenant_ids" selects tenants only for tenant_events "all"; with "none" it must be empty' },
      ]);
    }
    return { tenant_events: events, tenant_ids: [] };
  }
  if (ids) await requireOwnTenants(orgs, actor.org.id, ids, 'tenant_ids', sql);
  return { tenant_events: events, tenant_ids: ids };
}
