import type { DataSource, EntityManager } from 'typeorm';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { isActingInTenant, type Actor } from '../auth/actor.js';
import { bumpAuthEpoch } from '../auth/credential-store.js';
import type { LocationsRepository } from '../booking/locations.repository.js';
import type { ServicesRepository } from '../booking/services.repository.js';
import { effectiveLimits, presentLimits } from '../calls/call-limits.js';
import type { EventsRepository } from '../events/events.repository.js';
import { ConflictError, ForbiddenError, NotFoundError, UnprocessableError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Page, PageParams } from '../lib/pagination.js';
import { needRedis, type RedisClient } from '../lib/redis.js';
import { presentRow, type Presented } from '../lib/sql.js';
import { formatMoney, type Micros } from '../lib/money.js';
import type { Organization } from '../orgs/organization.entity.js';
import { OrganizationsRepository, type Locking, type OrganizationChanges, type TenantRow } from '../orgs/organizations.repository.js';
import { STARTER_SERVICES } from './industry-catalog.js';
import type { SpendLimits } from './spend-limit.js';
import type { TenantJobs } from './tenants.jobs.js';
import type { CreateTenantInput, LimitsInput, UpdateTenantInput } from './tenants.schemas.js';

export type TenantView = Presented<TenantRow>;

/** The domains that create a new tenant's starter rows, inside its creating transaction. */
export interface TenantStarters {
  locations: Pick<LocationsRepository, 'insertRow'>;
  services: Pick<ServicesRepository, 'insertRows'>;
  agents: Pick<AgentsRepository, 'insertRow'>;
}

/** Every tenant endpoint: 403 `not_a_reseller` unless the caller's own organization is a reseller. */
export function requireReseller(actor: Actor): void {
  if (!isActingInTenant(actor) && !actor.org.isReseller) {
    throw new ForbiddenError('not_a_reseller', 'Tenant endpoints are for reseller accounts; ask us to enable reseller access.');
  }
}

export const tenantNotFound = () => new NotFoundError('tenant', 'No tenant with this id belongs to your account.');

/** Reseller tenant management (SPEC.md §4.1, §3.1, §2.3). */
export class TenantsService {
  constructor(
    private readonly db: DataSource,
    private readonly orgs: OrganizationsRepository,
    private readonly starters: TenantStarters,
    private readonly jobs: TenantJobs,
    private readonly redis: RedisClient,
    private readonly events: Pick<EventsRepository, 'record'>,
    private readonly spend: Pick<SpendLimits, 'spentThisMonth' | 'limitSet'>,
  ) {}

  /** 404 `tenant_not_found` also for another's id (never says it exists); `lock` holds the row. */
  async findOwn(actor: Actor, tenantId: string, em: EntityManager = this.db.manager, locking: Locking = {}): Promise<TenantRow> {
    const row = await this.orgs.findTenant(em, actor.org.id, tenantId, locking);
    if (!row) throw tenantNotFound();
    return row;
  }

  /** Starter rows in one transaction; the reseller's row is locked while counting, so concurrent creations cannot pass the limit. */
  async create(actor: Actor, input: CreateTenantInput): Promise<TenantView> {
    const id = await this.db.transaction(async (em) => {
      const reseller = await this.orgs.load(em, actor.org.id, { lock: true });
      if ((await this.orgs.countTenants(em, reseller.id)) >= reseller.tenantLimit) {
        throw new ConflictError('tenant_limit_reached', `Your account may have at most ${reseller.tenantLimit} tenants.`, { limit: reseller.tenantLimit });
      }
      const tenantId = newId('ten');
      await this.orgs.insert(em, {
        id: tenantId,
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
      await this.starters.locations.insertRow(em, tenantId, { name: 'Main location', address: '', is_main: true });
      await this.starters.services.insertRows(
        em,
        tenantId,
        STARTER_SERVICES[input.industry].map((service) => ({ name: service.name, description: '', duration_minutes: service.durationMinutes })),
      );
      await this.starters.agents.insertRow(em, tenantId, {
        name: `${input.name} receptionist`,
        kind: 'appointment',
        greeting: `Hello, you have reached ${input.name}. How can I help you book your appointment?`,
        voice: 'default',
        prompt: 'Help callers book, move or cancel appointments for the services offered at the main location.',
      });
      return tenantId;
    });
    return this.get(actor, id);
  }

  list(actor: Actor, query: PageParams & { external_ref?: string }): Promise<Page<TenantView>> {
    return this.orgs.listTenants(actor.org.id, query, presentRow);
  }

  async get(actor: Actor, id: string): Promise<TenantView> {
    return presentRow(await this.findOwn(actor, id));
  }

  /** A state change (side effects in the `tenants` worker) is reported to the reseller in the same transaction; no change, no report. */
  async update(actor: Actor, id: string, input: UpdateTenantInput): Promise<TenantView> {
    const changedState = await this.db.transaction(async (em) => {
      const tenant = await this.findOwn(actor, id, em, { lock: true });
      const set: OrganizationChanges = {};
      if (input.name !== undefined) set.name = input.name;
      if (input.timezone !== undefined) set.timezone = input.timezone;
      if (input.external_ref !== undefined) set.externalRef = input.external_ref;
      const stateChange = input.disabled !== undefined && input.disabled !== tenant.disabled;
      if (stateChange) {
        set.disabled = input.disabled;
        set.disabledAt = input.disabled ? new Date() : null;
      }
      if (Object.keys(set).length) await this.orgs.update(em, id, set);
      if (stateChange)
        await this.events.record(em, { orgId: actor.org.id, event: input.disabled ? 'tenant.disabled' : 'tenant.enabled', fields: { tenant_id: id } });
      return stateChange;
    });
    if (changedState) {
      await needRedis(() => bumpAuthEpoch(this.redis));
      await this.jobs.applyState(id);
    }
    return this.get(actor, id);
  }

  async limits(actor: Actor, id: string): Promise<TenantLimitsView> {
    await this.findOwn(actor, id);
    const tenant = (await this.orgs.findWithParent(this.db.manager, id))!;
    return presentTenantLimits(tenant, await this.spend.spentThisMonth(this.db.manager, id));
  }

  /**
   * In one transaction with the tenant's row locked: a spend limit set is compared with the month's
   * spend as every charge committed before it left it, and the thresholds it puts the spend past
   * are sent (`tenant.spend_threshold`, once a month each).
   */
  async updateLimits(actor: Actor, id: string, input: LimitsInput): Promise<TenantLimitsView> {
    return this.db.transaction(async (em) => {
      await this.findOwn(actor, id, em, { lock: true });
      const ceiling = presentLimits((await this.orgs.findWithParent(em, id))!.parent!);
      for (const field of ['max_concurrent_calls', 'max_calls_per_hour'] as const) {
        const value = input[field];
        if (value !== undefined && value > ceiling[field]) {
          throw new UnprocessableError('above_reseller_limit', `${field} may be at most ${ceiling[field]}, your account's ceiling.`, {
            field,
            limit: ceiling[field],
          });
        }
      }
      const set: OrganizationChanges = {};
      if (input.max_concurrent_calls !== undefined) set.maxConcurrentCalls = input.max_concurrent_calls;
      if (input.max_calls_per_hour !== undefined) set.maxCallsPerHour = input.max_calls_per_hour;
      if (input.monthly_spend_limit !== undefined) set.monthlySpendLimitMicros = input.monthly_spend_limit;
      await this.orgs.update(em, id, set);
      const tenant = (await this.orgs.findWithParent(em, id))!;
      const spent = await this.spend.spentThisMonth(em, id);
      if (input.monthly_spend_limit !== undefined) await this.spend.limitSet(em, tenant, spent);
      return presentTenantLimits(tenant, spent);
    });
  }
}

export type TenantLimitsView = ReturnType<typeof presentTenantLimits>;

/** CONTRACT.md "Limits" and §5: the limits in force, the reseller's ceiling, the spend limit and the month's spend, in the reseller's currency. */
function presentTenantLimits(tenant: Organization, spent: Micros) {
  const reseller = tenant.parent!;
  return {
    ...presentLimits(effectiveLimits(tenant)),
    ceiling: presentLimits(reseller),
    monthly_spend_limit: tenant.monthlySpendLimitMicros === null ? null : formatMoney(tenant.monthlySpendLimitMicros),
    spent_this_month: formatMoney(spent),
    currency: reseller.currency,
  };
}
