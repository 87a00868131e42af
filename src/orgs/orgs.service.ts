import type { EntityManager } from 'typeorm';
import { insertApiKey } from '../auth/api-keys.service.js';
import { CAPABILITIES, intersect, type Capability } from '../auth/capabilities.js';
import { bumpAuthEpoch } from '../auth/credential-store.js';
import { hashPassword } from '../auth/passwords.js';
import { presentLimits } from '../calls/call-limits.js';
import { appendLedger, balanceOf, type BalanceView } from '../billing/ledger.js';
import { db, pgCode, PG_UNIQUE_VIOLATION } from '../lib/db.js';
import { ConflictError, InvalidRequestError, NotFoundError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { needRedis, type RedisClient } from '../lib/redis.js';
import { formatMoney, MAX_BALANCE_MICROS, type Micros } from '../lib/money.js';
import { Member } from './member.entity.js';
import { Organization } from './organization.entity.js';

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
}

/** The operator's view of an organization. */
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

function applyOrgSettings(org: Organization, input: UpdateOrgInput): void {
  if (input.reseller !== undefined) org.isReseller = input.reseller;
  if (input.tenant_limit !== undefined) org.tenantLimit = input.tenant_limit;
  const { ceiling, rates } = input;
  if (ceiling?.max_concurrent_calls !== undefined) org.maxConcurrentCalls = ceiling.max_concurrent_calls;
  if (ceiling?.max_calls_per_hour !== undefined) org.maxCallsPerHour = ceiling.max_calls_per_hour;
  if (rates?.per_minute !== undefined) org.ratePerMinuteMicros = rates.per_minute;
  if (rates?.per_text !== undefined) org.ratePerTextMicros = rates.per_text;
}

async function findOrg(em: EntityManager, id: string, lock = false): Promise<Organization> {
  const org = await em.findOne(Organization, { where: { id }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
  if (!org) throw new NotFoundError('organization');
  return org;
}

/**
 * An organization that pays for itself: not a tenant. A tenant has no login, no balance and no
 * settings of the operator's (SPEC.md §1): its reseller operates it through the API.
 */
async function findPayingOrg(em: EntityManager, id: string, lock = false): Promise<Organization> {
  const org = await findOrg(em, id, lock);
  if (org.parentId) {
    throw new ConflictError(
      'org_is_tenant',
      `Organization ${org.id} is a tenant of ${org.parentId}: a tenant has no members, keys, balance or settings of its own; its reseller operates it through the API.`,
    );
  }
  return org;
}

async function insertMember(
  em: EntityManager,
  input: { orgId: string; email: string | null; capabilities: Capability[]; password?: string },
): Promise<Member> {
  const member = em.create(Member, {
    id: newId('mem'),
    orgId: input.orgId,
    email: input.email,
    capabilities: intersect(input.capabilities),
    passwordHash: input.password ? await hashPassword(input.password) : null,
  });
  try {
    await em.insert(Member, member);
  } catch (err) {
    if (pgCode(err) === PG_UNIQUE_VIOLATION) throw new ConflictError('member_exists', 'A member with this email already exists.');
    throw err;
  }
  return em.findOneByOrFail(Member, { id: member.id });
}

/** The operator's actions on organizations (CONTRACT.md §3), shared by the admin API and the ops CLI. */
export class OrgsService {
  constructor(private readonly redis: RedisClient) {}

  /** Creates an organization with an owner member holding every capability and one key with all four. */
  createOrg(input: CreateOrgInput) {
    return db.transaction(async (em) => {
      const org = em.create(Organization, {
        id: newId('org'),
        name: input.name,
        timezone: input.timezone,
        currency: input.currency,
      });
      applyOrgSettings(org, input);
      await em.insert(Organization, org);
      if (input.balance !== undefined && input.balance !== 0n) {
        await appendLedger(em, { orgId: org.id, kind: 'adjustment', amountMicros: input.balance, description: 'opening balance' });
      }
      const member = await insertMember(em, { orgId: org.id, email: null, capabilities: [...CAPABILITIES] });
      const apiKey = await insertApiKey(em, { orgId: org.id, memberId: member.id, label: 'Owner key', permissions: [...CAPABILITIES] });
      const saved = await findOrg(em, org.id);
      return { org: presentOrgForOperator(saved), member: presentMember(member), api_key: apiKey };
    });
  }

  async getOrg(id: string) {
    return presentOrgForOperator(await findOrg(db.manager, id));
  }

  async updateOrg(id: string, input: UpdateOrgInput) {
    const org = await db.transaction(async (em) => {
      const found = await findPayingOrg(em, id, true);
      applyOrgSettings(found, input);
      await em.save(found);
      return found;
    });
    // Reseller standing is part of every cached authorization of this organization.
    await needRedis(() => bumpAuthEpoch(this.redis));
    return presentOrgForOperator(org);
  }

  /** Credits (or, negative, debits) an organization through a ledger line, within ±MAX_BALANCE_MICROS. */
  adjustBalance(id: string, amount: Micros): Promise<BalanceView> {
    return db.transaction(async (em) => {
      const org = await findPayingOrg(em, id, true);
      const after = org.balanceMicros + amount;
      if (after > MAX_BALANCE_MICROS || after < -MAX_BALANCE_MICROS) {
        const limit = formatMoney(MAX_BALANCE_MICROS);
        throw new InvalidRequestError(`The balance would leave the range -${limit} to ${limit}.`, [
          { path: 'amount', message: `"amount" would take the balance beyond ±${limit}` },
        ]);
      }
      await appendLedger(em, { orgId: org.id, kind: 'adjustment', amountMicros: amount, description: 'operator adjustment' });
      return balanceOf(em, org.id);
    });
  }

  /** Adds a member with the given capabilities (and a password to sign in), plus one key with the same. */
  addMember(orgId: string, input: { email: string; capabilities: Capability[]; password?: string }) {
    return db.transaction(async (em) => {
      const org = await findPayingOrg(em, orgId);
      const member = await insertMember(em, { orgId: org.id, ...input });
      const apiKey = await insertApiKey(em, { orgId: org.id, memberId: member.id, label: `Key of ${input.email}`, permissions: member.capabilities });
      return { member: presentMember(member), api_key: apiKey };
    });
  }
}
