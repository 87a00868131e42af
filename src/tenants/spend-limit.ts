import type { EntityManager } from 'typeorm';
import { AppError } from '../lib/errors.js';
import { formatMoney, type Micros } from '../lib/money.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { startOfNextUtcMonth, startOfUtcMonth } from '../usage/usage-window.js';
import type { SpendLimitsRepository, SpendMonth, SpendThreshold } from './spend-limits.repository.js';

/** The thresholds of `tenant.spend_threshold`, in percent of the limit (CONTRACT.md §5). */
export const SPEND_THRESHOLDS = [80, 100] as const;

/** 402 `spend_limit_reached`: a call placed inside a tenant whose monthly spend limit is reached. */
export class SpendLimitReachedError extends AppError {
  constructor() {
    super(
      402,
      'spend_limit_reached',
      "This tenant's monthly spend limit is reached; its reseller can raise it. Calls are placed again from the start of next month.",
    );
  }
}

/** The UTC calendar month holding `at`. */
export function spendMonth(at: Date): SpendMonth {
  return { since: startOfUtcMonth(at), until: startOfNextUtcMonth(at), month: startOfUtcMonth(at).toISOString().slice(0, 7) };
}

/** The thresholds `spent` is at or past, of `limit`. */
const thresholdsReached = (spent: Micros, limit: Micros): number[] => SPEND_THRESHOLDS.filter((percent) => spent * 100n >= limit * BigInt(percent));

/** A tenant with a limit, as a transaction charging it sees it under its row lock. */
interface TenantMonth {
  limit: Micros;
  /** This month's charges committed before the lock, plus what this transaction charges it. */
  spent: Micros;
  resellerId: string;
  currency: string;
}

/**
 * The month's spend of the tenants an ending charges, as seen under their row locks: what they had
 * spent, plus what the ending adds as it goes. An ending's charges of a tenant without a limit are
 * not followed (it has nothing to reach).
 */
export class TenantSpending {
  constructor(
    readonly month: SpendMonth,
    private readonly tenants: Map<string, TenantMonth>,
    /** When the spend was read under the tenants' locks (the database's clock, as text): when a threshold it reaches was reached. */
    readonly at: string | null = null,
  ) {}

  /** Whether `orgId`'s limit is reached: a charge for it is not made (a text is not sent). */
  reached(orgId: string): boolean {
    const tenant = this.tenants.get(orgId);
    return tenant !== undefined && tenant.spent >= tenant.limit;
  }

  add(orgId: string, micros: Micros): void {
    const tenant = this.tenants.get(orgId);
    if (tenant) tenant.spent += micros;
  }

  /** The thresholds each tenant's spend is at or past now. */
  thresholds(): SpendThreshold[] {
    return [...this.tenants].flatMap(([tenantId, t]) =>
      thresholdsReached(t.spent, t.limit).map((percent) => ({
        tenantId,
        resellerId: t.resellerId,
        percent,
        spent: formatMoney(t.spent),
        limit: formatMoney(t.limit),
        currency: t.currency,
      })),
    );
  }
}

/** What an ending charges one organization: its calls' charges, and whether a charged text may follow. */
export interface OrgCharge {
  org: Organization;
  payer: Organization;
  micros: Micros;
  mayText: boolean;
}

/**
 * THE spend limit of a tenant (CONTRACT.md §5 "Tenant spend limit"). Once its month's charges
 * (`spent_this_month`, the `charges.total` of its usage) are at or above `monthly_spend_limit`, none
 * of its calls is dialed (checked at the dial, `CallEngine`) nor placed (402, `CallsRepository.placeOutbound`,
 * which campaigns use too), and no charged text is sent; calls in progress go on and are charged.
 *
 * Exact across processes: the tenant's row is the turnstile. Every transaction that charges a tenant
 * with a limit locks its row (`charging`, FOR NO KEY UPDATE) before it reads the month's spend and
 * holds it to its commit; every dial of its calls locks the row (FOR SHARE) and only then, in a later
 * statement (whose snapshot sees every charge committed before the lock), checks the spend and marks
 * the calls dialed. So each dial either comes before a charge's commit, or sees the charge.
 */
export class SpendLimits {
  constructor(
    private readonly orgs: Pick<OrganizationsRepository, 'lockSpendLimits' | 'shareLockForDial'>,
    private readonly repository: SpendLimitsRepository,
    /** The clock of the calendar month (createRuntime's `now`). */
    private readonly now: () => Date,
  ) {}

  month(): SpendMonth {
    return spendMonth(this.now());
  }

  /** In a dialing transaction, after its calls are locked: the tenant's row, shared with other dials (see the class); whether it is disabled. */
  lockForDial(em: EntityManager, tenantId: string): Promise<{ disabled: boolean }> {
    return this.orgs.shareLockForDial(em, tenantId);
  }

  /**
   * In an ending's transaction, after its calls are locked: locks the tenants with a limit that it
   * charges (by id; the lock order of `CallEngine`) and reads their month's spend, with the calls'
   * charges added. No statement when none has a limit.
   */
  async charging(em: EntityManager, charges: OrgCharge[]): Promise<TenantSpending> {
    const month = this.month();
    const charged = new Map<string, { payer: Organization; micros: Micros }>();
    for (const { org, payer, micros, mayText } of charges) {
      if (org.monthlySpendLimitMicros === null || (micros === 0n && !mayText)) continue;
      const known = charged.get(org.id);
      charged.set(org.id, { payer, micros: (known?.micros ?? 0n) + micros });
    }
    if (charged.size === 0) return new TenantSpending(month, new Map());
    const ids = [...charged.keys()];
    // The limits as they are once locked: a limit changed or removed meanwhile is seen; one set on a
    // tenant that had none when the ending read it is not (docs/architecture.md: the next charge sends it).
    const limits = await this.orgs.lockSpendLimits(em, ids);
    const { spent, at } = await this.repository.spentBy(em, ids, month);
    const tenants = new Map<string, TenantMonth>();
    for (const [id, { payer, micros }] of charged) {
      const limit = limits.get(id);
      if (limit === null || limit === undefined) continue;
      tenants.set(id, { limit, spent: spent.get(id)! + micros, resellerId: payer.id, currency: payer.currency });
    }
    return new TenantSpending(month, tenants, at);
  }

  /** In the charging transaction, before its ledger lines (the payer's row is locked last): the thresholds reached, each sent once a month. */
  async recordThresholds(em: EntityManager, spending: TenantSpending): Promise<void> {
    await this.repository.recordThresholds(em, spending.month, spending.thresholds(), spending.at);
  }

  /**
   * A limit set (in the PATCH's transaction, the tenant's row locked, `spent` read after): the
   * thresholds the month's spend is past are sent (a lowered limit may put it past one), each at
   * most once a month; none for a limit removed. `tenant` with its reseller (`parent`).
   */
  async limitSet(em: EntityManager, tenant: Organization, spent: Micros): Promise<void> {
    const reseller = tenant.parent!;
    const limit = tenant.monthlySpendLimitMicros;
    if (limit === null) return;
    const spending = new TenantSpending(this.month(), new Map([[tenant.id, { limit, spent, resellerId: reseller.id, currency: reseller.currency }]]));
    await this.recordThresholds(em, spending);
  }

  /** `spent_this_month` of a tenant: its charges since the start of the month (read after a lock held, every charge committed before it). */
  async spentThisMonth(em: EntityManager, tenantId: string): Promise<Micros> {
    return (await this.repository.spentBy(em, [tenantId], this.month())).spent.get(tenantId)!;
  }
}
