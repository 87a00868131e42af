import type { EntityManager } from 'typeorm';
import { Agent } from '../agents/agent.entity.js';
import { isActingInTenant, type Actor } from '../auth/actor.js';
import { orgWithLimits, presentLimits } from '../calls/call-limits.js';
import { bumpAuthEpoch } from '../auth/credential-store.js';
import { Location } from '../booking/location.entity.js';
import { Service } from '../booking/service.entity.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { db } from '../lib/db.js';
import { ConflictError, ForbiddenError, NotFoundError, UnprocessableError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { needRedis, type RedisClient } from '../lib/redis.js';
import { Organization } from '../orgs/organization.entity.js';
import { STARTER_SERVICES } from './industry-catalog.js';
import type { TenantJobs } from './tenants.jobs.js';
import type { CreateTenantInput, LimitsInput, UpdateTenantInput } from './tenants.schemas.js';

interface TenantRow {
  id: string;
  name: string;
  timezone: string;
  industry: string | null;
  external_ref: string | null;
  disabled: boolean;
  created_at: Date;
}

const TENANT_COLUMNS = 'id, name, timezone, industry, external_ref, disabled, created_at';

/** CONTRACT.md "Tenant". */
export const presentTenant = (t: TenantRow) => ({
  id: t.id,
  name: t.name,
  timezone: t.timezone,
  industry: t.industry,
  external_ref: t.external_ref,
  disabled: t.disabled,
  created_at: t.created_at.toISOString(),
});

/** Every tenant endpoint: 403 `not_a_reseller` unless the caller's own organization is a reseller. */
export function requireReseller(actor: Actor): void {
  if (!isActingInTenant(actor) && !actor.org.isReseller) {
    throw new ForbiddenError('not_a_reseller', 'Tenant endpoints are for reseller accounts; ask us to enable reseller access.');
  }
}

/** One of the caller's tenants, or 404 `tenant_not_found` (never saying whether the id exists elsewhere). */
export async function findOwnTenant(actor: Actor, tenantId: string, em: EntityManager = db.manager, lock = false): Promise<TenantRow> {
  const [row] = await em.query(
    `SELECT ${TENANT_COLUMNS} FROM organizations WHERE id = $1 AND parent_id = $2 ${lock ? 'FOR UPDATE' : ''}`,
    [tenantId, actor.org.id],
  );
  if (!row) throw new NotFoundError('tenant', 'No tenant with this id belongs to your account.');
  return row;
}

/** Reseller tenant management (SPEC.md §4.1, §3.1, §2.3). */
export class TenantsService {
  constructor(
    private readonly redis: RedisClient,
    private readonly jobs: TenantJobs,
  ) {}

  /**
   * Creates a tenant with, in the same transaction, its main location, the starter services of
   * its industry and a default appointment agent. The reseller's row is locked while counting,
   * so concurrent creations cannot pass the tenant count limit together.
   */
  async create(actor: Actor, input: CreateTenantInput) {
    const id = await db.transaction(async (em) => {
      const reseller = await em.findOneOrFail(Organization, { where: { id: actor.org.id }, lock: { mode: 'pessimistic_write' } });
      const [{ count }] = await em.query('SELECT count(*)::int AS count FROM organizations WHERE parent_id = $1', [reseller.id]);
      if (count >= reseller.tenantLimit) {
        throw new ConflictError('tenant_limit_reached', `Your account may have at most ${reseller.tenantLimit} tenants.`, { limit: reseller.tenantLimit });
      }
      const tenant = em.create(Organization, {
        id: newId('ten'),
        name: input.name,
        timezone: input.timezone,
        industry: input.industry,
        externalRef: input.external_ref ?? null,
        parentId: reseller.id,
        currency: reseller.currency,
        maxConcurrentCalls: reseller.maxConcurrentCalls,
        maxCallsPerHour: reseller.maxCallsPerHour,
        bookingPageEnabled: false,
      });
      await em.insert(Organization, tenant);
      await em.insert(Location, { id: newId('loc'), orgId: tenant.id, name: 'Main location', address: '', isMain: true });
      await em.insert(
        Service,
        STARTER_SERVICES[input.industry].map((s) => ({ id: newId('svc'), orgId: tenant.id, name: s.name, description: '', durationMinutes: s.durationMinutes })),
      );
      await em.insert(Agent, {
        id: newId('agt'),
        orgId: tenant.id,
        name: `${input.name} receptionist`,
        kind: 'appointment',
        greeting: `Hello, you have reached ${input.name}. How can I help you book your appointment?`,
        voice: 'default',
        prompt: 'Help callers book, move or cancel appointments for the services offered at the main location.',
      });
      return tenant.id;
    });
    return this.get(actor, id);
  }

  list(actor: Actor, query: PageParams & { external_ref?: string }): Promise<Page<ReturnType<typeof presentTenant>>> {
    const filters = where('parent_id = ?', actor.org.id).equal('external_ref', query.external_ref);
    return listPage(db, { select: TENANT_COLUMNS, from: 'organizations', where: filters }, query, presentTenant);
  }

  async get(actor: Actor, id: string) {
    return presentTenant(await findOwnTenant(actor, id));
  }

  /**
   * Renames, re-zones, re-refs; `disabled: true` disables (reads keep working, changes are
   * refused, its side effects run in the `tenants` worker), `disabled: false` re-enables.
   */
  async update(actor: Actor, id: string, input: UpdateTenantInput) {
    const changedState = await db.transaction(async (em) => {
      const tenant = await findOwnTenant(actor, id, em, true);
      const set: Partial<Organization> = {};
      if (input.name !== undefined) set.name = input.name;
      if (input.timezone !== undefined) set.timezone = input.timezone;
      if (input.external_ref !== undefined) set.externalRef = input.external_ref;
      const stateChange = input.disabled !== undefined && input.disabled !== tenant.disabled;
      if (stateChange) {
        set.disabled = input.disabled;
        set.disabledAt = input.disabled ? new Date() : null;
      }
      if (Object.keys(set).length) await em.update(Organization, { id }, set);
      return stateChange;
    });
    if (changedState) {
      await needRedis(() => bumpAuthEpoch(this.redis));
      await this.jobs.applyState(id);
    }
    return this.get(actor, id);
  }

  /** The tenant's limits in force (those the engine and its campaigns apply) and its reseller's ceiling. */
  async limits(actor: Actor, id: string) {
    await findOwnTenant(actor, id);
    const { org: tenant, limits } = (await orgWithLimits(db.manager, id))!;
    return { ...presentLimits(limits), ceiling: presentLimits(tenant.parent!) };
  }

  /** Sets a tenant's outbound limits; a value above the reseller's ceiling is 422 `above_reseller_limit`. */
  async updateLimits(actor: Actor, id: string, input: LimitsInput) {
    const current = await this.limits(actor, id);
    for (const field of ['max_concurrent_calls', 'max_calls_per_hour'] as const) {
      const value = input[field];
      if (value !== undefined && value > current.ceiling[field]) {
        throw new UnprocessableError('above_reseller_limit', `${field} may be at most ${current.ceiling[field]}, your account's ceiling.`, {
          field,
          limit: current.ceiling[field],
        });
      }
    }
    await db.query(
      `UPDATE organizations SET max_concurrent_calls = COALESCE($2, max_concurrent_calls), max_calls_per_hour = COALESCE($3, max_calls_per_hour) WHERE id = $1`,
      [id, input.max_concurrent_calls ?? null, input.max_calls_per_hour ?? null],
    );
    return this.limits(actor, id);
  }
}
