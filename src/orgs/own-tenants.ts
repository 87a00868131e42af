import { InvalidRequestError, type ErrorDetail } from '../lib/errors.js';
import type { Sql } from '../lib/pagination.js';
import type { OrganizationsRepository } from './organizations.repository.js';

/**
 * THE rule for tenant ids a reseller names (CONTRACT.md §5): an id in `tenant_ids` or `tenant_id`
 * that is not one of the caller's tenants is 400 `invalid_request` naming it, never a hint that it
 * exists elsewhere. `path` is the field (`tenant_id`), or the array's (`tenant_ids`, each entry
 * then named by its index as validation names list entries: `tenant_ids.1`). Resolves when every id is the reseller's tenant. `sql`: the caller's transaction, when it holds one (not a second connection).
 */
export async function requireOwnTenants(
  orgs: Pick<OrganizationsRepository, 'tenantIdsAmong'>,
  resellerId: string,
  ids: string | readonly string[],
  path: string,
  sql?: Sql,
): Promise<void> {
  const list = typeof ids === 'string' ? [ids] : ids;
  if (list.length === 0) return;
  const own = await orgs.tenantIdsAmong(resellerId, list, sql);
  const details: ErrorDetail[] = list.flatMap((id, i) =>
    own.has(id) ? [] : [{ path: typeof ids === 'string' ? path : `${path}.${i}`, message: `${JSON.stringify(id)} is not one of your tenants.` }],
  );
  if (details.length) throw new InvalidRequestError(`${details.map((d) => d.path).join(', ')}: not one of your tenants.`, details);
}
