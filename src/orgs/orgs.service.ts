import type { DataSource, EntityManager } from 'typeorm';
import type { ApiKeysService } from '../auth/api-keys.service.js';
import { CAPABILITIES, intersect, type Capability } from '../auth/capabilities.js';
import { bumpAuthEpoch } from '../auth/credential-store.js';
import { hashPassword } from '../auth/passwords.js';
import { presentLimits } from '../calls/call-limits.js';
import { presentBalance, type BalanceView } from '../billing/ledger.js';
import type { LedgerRepository } from '../billing/ledger.repository.js';
import { pgCode, PG_UNIQUE_VIOLATION } from '../lib/db.js';
import { ConflictError, InvalidRequestError, NotFoundError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { needRedis, type RedisClient } from '../lib/redis.js';
import { formatMoney, MAX_BALANCE_MICROS, type Micros } from '../lib/money.js';
import type { Member } from './member.entity.js';
import { isTenant, type Organization } from './organization.entity.js';
import type { Locking, OrganizationChanges, OrganizationsRepository } from './organizations.repository.js';

interface Ceiling {
  max_concurrent_calls?: number;
  max_calls_per_hour?: number;
}

interface Rates {
  per_minute?: Micros;
  per_text?: Micros;
}

export interface CreateOrgInput {
  name: string;
  timezone: string;
  reseller: boolean;
  tenant_limit: number;
  ceiling?: Ceiling;
  rates?: Rates;
  balance?: Micros;
  currency: string;
}

export interface UpdateOrgInput {
  reseller?: boolean;
  tenant_limit?: number;
  ceiling?: Ceiling;
  rates?: Rates;
  /** `balance.low` is sent when the balance falls below it; null unsets it. */
  low_balance_threshold?: Micros | null;
}

export function presentOrgForOperator(org: Organization) {
  return {
    id: org.id,
    name: org.name,
    timezone: org.timezone,
    reseller: org.isReseller,
    parent_id: org.parentId,
    tenant_limit: org.tenantLimit,
    ceiling: presentLimits(org),
    rates: { per_minute: formatMoney(org.ratePerMinuteMicros), per_text: formatMoney(org.ratePerTextMicros) },
    balance: formatMoney(org.balanceMicros),
    currency: org.currency,
    low_balance_threshold: org.lowBalanceThresholdMicros === null ? null : formatMoney(org.lowBalanceThresholdMicros),
    disabled: org.disabled,
    created_at: org.createdAt.toISOString(),
  };
}

export function presentMember(member: Member) {
  return {
    id: member.id,
    org_id: member.orgId,
    email: member.email,
    capabilities: member.capabilities,
    created_at: member.createdAt.toISOString(),
  };
}

function orgSettings(input: UpdateOrgInput): OrganizationChanges {
  const { ceiling, rates } = input;
  const changes: OrganizationChanges = {};
  if (input.reseller !== undefined) changes.isReseller = input.reseller;
  if (input.tenant_limit !== undefined) changes.tenantLimit = input.tenant_limit;
  if (ceiling?.max_concurrent_calls !== undefined) changes.maxConcurrentCalls = ceiling.max_concurrent_calls;
  if (ceiling?.max_calls_per_hour !== undefined) changes.maxCallsPerHour = ceiling.max_calls_per_hour;
  if (rates?.per_minute !== undefined) changes.ratePerMinuteMicros = rates.per_minute;
  if (rates?.per_text !== undefined) changes.ratePerTextMicros = rates.per_text;
  if (input.low_balance_threshold !== undefined) changes.lowBalanceThresholdMicros = input.low_balance_threshold;
  return changes;
}

/** The operator's actions on organizations (CONTRACT.md §3), shared by the admin API and the ops CLI. */
export class OrgsService {
  constructor(
    private readonly db: DataSource,
    private readonly orgs: OrganizationsRepository,
    private readonly ledger: LedgerRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly redis: RedisClient,
  ) {}

  createOrg(input: CreateOrgInput) {
    return this.db.transaction(async (em) => {
      const id = newId('org');
      await this.orgs.insert(em, { id, name: input.name, timezone: input.timezone, currency: input.currency, ...orgSettings(input) });
      if (input.balance !== undefined && input.balance !== 0n) {
        await this.ledger.append(em, { orgId: id, kind: 'adjustment', amountMicros: input.balance, description: 'opening balance' });
      }
      const member = await this.insertMember(em, { orgId: id, email: null, capabilities: [...CAPABILITIES] });
      const apiKey = await this.apiKeys.issue(em, { orgId: id, memberId: member.id, label: 'Owner key', permissions: [...CAPABILITIES] });
      const saved = await this.orgs.load(em, id);
      return { org: presentOrgForOperator(saved), member: presentMember(member), api_key: apiKey };
    });
  }

  async getOrg(id: string) {
    return presentOrgForOperator(await this.findOrg(this.db.manager, id));
  }

  /** A new threshold applies at once: a balance already below it is reported now, not at a charge that might never come. */
  async updateOrg(id: string, input: UpdateOrgInput) {
    const org = await this.db.transaction(async (em) => {
      await this.findPayingOrg(em, id, { lock: true });
      await this.orgs.update(em, id, orgSettings(input));
      if (input.low_balance_threshold !== undefined) await this.ledger.reportLowBalances(em, [id]);
      return this.orgs.load(em, id);
    });
    // Reseller standing is part of every cached authorization of this organization.
    await needRedis(() => bumpAuthEpoch(this.redis));
    return presentOrgForOperator(org);
  }

  /** Credits (or, negative, debits) an organization through a ledger line, within ±MAX_BALANCE_MICROS. */
  adjustBalance(id: string, amount: Micros): Promise<BalanceView> {
    return this.db.transaction(async (em) => {
      const org = await this.findPayingOrg(em, id, { lock: true });
      const after = org.balanceMicros + amount;
      if (after > MAX_BALANCE_MICROS || after < -MAX_BALANCE_MICROS) {
        const limit = formatMoney(MAX_BALANCE_MICROS);
        throw new InvalidRequestError(`The balance would leave the range -${limit} to ${limit}.`, [
          { path: 'amount', message: `"amount" would take the balance beyond ±${limit}` },
        ]);
      }
      await this.ledger.append(em, { orgId: org.id, kind: 'adjustment', amountMicros: amount, description: 'operator adjustment' });
      return presentBalance(await this.orgs.load(em, org.id));
    });
  }

  addMember(orgId: string, input: { email: string; capabilities: Capability[]; password?: string }) {
    return this.db.transaction(async (em) => {
      const org = await this.findPayingOrg(em, orgId);
      const member = await this.insertMember(em, { orgId: org.id, ...input });
      const apiKey = await this.apiKeys.issue(em, { orgId: org.id, memberId: member.id, label: `Key of ${input.email}`, permissions: member.capabilities });
      return { member: presentMember(member), api_key: apiKey };
    });
  }

  private async findOrg(em: EntityManager, id: string, locking?: Locking): Promise<Organization> {
    const org = await this.orgs.find(em, id, locking);
    if (!org) throw new NotFoundError('organization');
    return org;
  }

  /** Not a tenant: a tenant has no login, balance or operator settings (SPEC.md §1). */
  private async findPayingOrg(em: EntityManager, id: string, locking?: Locking): Promise<Organization> {
    const org = await this.findOrg(em, id, locking);
    if (isTenant(org)) {
      throw new ConflictError(
        'org_is_tenant',
        `Organization ${org.id} is a tenant of ${org.parentId}: a tenant has no members, keys, balance or settings of its own; its reseller operates it through the API.`,
      );
    }
    return org;
  }

  private async insertMember(
    em: EntityManager,
    input: { orgId: string; email: string | null; capabilities: Capability[]; password?: string },
  ): Promise<Member> {
    try {
      return await this.orgs.insertMember(em, {
        id: newId('mem'),
        orgId: input.orgId,
        email: input.email,
        capabilities: intersect(input.capabilities),
        passwordHash: input.password ? await hashPassword(input.password) : null,
      });
    } catch (err) {
      if (pgCode(err) === PG_UNIQUE_VIOLATION) throw new ConflictError('member_exists', 'A member with this email already exists.');
      throw err;
    }
  }
}
