import { isActingInTenant, type Actor } from '../auth/actor.js';
import { retainedEvents } from '../history/history-partitions.js';
import { InvalidRequestError, NotFoundError } from '../lib/errors.js';
import type { Page } from '../lib/pagination.js';
import { presentRow } from '../lib/sql.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { requireOwnTenants } from '../orgs/own-tenants.js';
import { requireReseller } from '../tenants/tenants.service.js';
import type { EventScope, EventsRepository, EventView } from './events.repository.js';
import type { EventsQuery, EventsScopeQuery } from './events.schemas.js';

/**
 * The events feed (CONTRACT.md §4): a receiver that was down reads what it missed, without retries.
 * Reads are bounded to the retained days, so only their partitions; by id, one primary-key probe per day.
 * A reseller's feed reaches its tenants' events too (§5 "Events feed across tenants").
 */
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly orgs: Pick<OrganizationsRepository, 'tenantIdsAmong'>,
  ) {}

  async list(actor: Actor, query: EventsQuery): Promise<Page<EventView>> {
    return this.events.list(await this.listScope(actor, query), retainedEvents(), query);
  }

  /**
   * By id, whatever a list of the caller could show: a reseller acting as itself reads its
   * tenants' events too (its feed lists them with `include_tenants`, and it reads them inside the
   * tenant anyway); anyone else, its own organization's.
   */
  async get(actor: Actor, id: string): Promise<EventView> {
    const row = await this.events.find(ownEvents(actor, resellerAsItself(actor)), id, retainedEvents());
    if (!row) throw new NotFoundError('event');
    return presentRow(row);
  }

  /**
   * Whose events a list reads: the acting organization's; with `include_tenants=true`, the
   * reseller's account (its own and every tenant's); with `tenant_id`, that tenant's alone. Both
   * are a reseller's (403 `not_a_reseller` otherwise) acting as itself (400 inside a tenant).
   */
  private async listScope(actor: Actor, { include_tenants: includeTenants, tenant_id: tenantId }: EventsScopeQuery): Promise<EventScope> {
    const named = [...(includeTenants ? ['include_tenants'] : []), ...(tenantId !== undefined ? ['tenant_id'] : [])];
    if (named.length === 0) return ownEvents(actor, false);
    if (isActingInTenant(actor)) {
      const details = named.map((path) => ({ path, message: `"${path}" is for a reseller acting as itself, not inside a tenant` }));
      throw new InvalidRequestError(`${named.join(' and ')}: not available inside a tenant (X-Tenant-Id).`, details);
    }
    requireReseller(actor);
    if (tenantId === undefined) return ownEvents(actor, true);
    await requireOwnTenants(this.orgs, actor.org.id, tenantId, 'tenant_id');
    return { by: 'org_id', id: tenantId };
  }
}

/** The acting organization's events, with its tenants' when `withTenants` (their account is the organization). */
const ownEvents = (actor: Actor, withTenants: boolean): EventScope => ({ by: withTenants ? 'account_id' : 'org_id', id: actor.org.id });

const resellerAsItself = (actor: Actor) => !isActingInTenant(actor) && actor.org.isReseller;
