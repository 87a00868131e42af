import { In, type DataSource, type EntityManager } from 'typeorm';
import type { OrgRef } from '../auth/actor.js';
import { payerIdSql } from '../billing/charges.js';
import { listPage, type Page, type PageParams, type Sql } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import { Member } from './member.entity.js';
import { Organization } from './organization.entity.js';
import { Reads } from '../lib/reads.js';

const TENANT = rowShape('organizations', {
  id: column<string>(),
  name: column<string>(),
  timezone: column<string>(),
  industry: column<string | null>(),
  external_ref: column<string | null>(),
  disabled: column<boolean>(),
  created_at: column<Date>(),
});

export type TenantRow = RowOf<typeof TENANT.columns>;

/** What authorization decisions need (`OrgRef`); joined as `o` by the credentials' lookups. */
export const ORG_REF = rowShape('organizations', {
  id: column<string>(),
  parent_id: column<string | null>(),
  is_reseller: column<boolean>(),
  disabled: column<boolean>(),
});

export type OrgRefRow = RowOf<typeof ORG_REF.columns>;

export const orgRefOf = (row: OrgRefRow): OrgRef => ({
  id: row.id,
  parentId: row.parent_id,
  isReseller: row.is_reseller,
  disabled: row.disabled,
});

/** "Is a tenant" in SQL (see `isTenant`); qualified as `o.${IS_TENANT}`. */
export const IS_TENANT = 'parent_id IS NOT NULL';

/** The one spelling of "a tenant of". */
const tenantsOf = (resellerId: string) => where('parent_id = ?', resellerId);

interface DialingRow {
  id: string;
  disabled: boolean;
  max_concurrent_calls: number;
  max_calls_per_hour: number;
  carrier_provider: string;
  parent_max_concurrent_calls: number | null;
  parent_max_calls_per_hour: number | null;
  spend_limited: boolean;
}

/** See `OrganizationsRepository.dialingOf`. */
export interface DialingContext {
  disabled: boolean;
  carrierProvider: string;
  maxConcurrentCalls: number;
  maxCallsPerHour: number;
  parent: { maxConcurrentCalls: number; maxCallsPerHour: number } | null;
  /** A tenant with a monthly spend limit: its dials check it (src/tenants/spend-limit.ts). */
  spendLimited: boolean;
}

export type NewOrganization = Pick<Organization, 'id' | 'name'> & Partial<Omit<Organization, 'parent' | 'createdAt'>>;

/** An organization's id, parent and creation never change. */
export type OrganizationChanges = Partial<Omit<Organization, 'id' | 'parentId' | 'parent' | 'createdAt'>>;

/** How a read that precedes a write takes the row: `lock` holds it (FOR UPDATE) until the caller's transaction ends. */
export interface Locking {
  lock?: boolean;
}

const lockOption = ({ lock = false }: Locking) => (lock ? { lock: { mode: 'pessimistic_write' as const } } : {});

/** `organizations` (a tenant is a row with a parent) and `members`: other domains read and write them here. */
export class OrganizationsRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  find(em: EntityManager, id: string, locking: Locking = {}): Promise<Organization | null> {
    return em.findOne(Organization, { where: { id }, ...lockOption(locking) });
  }

  /** An organization known to exist (a credential's, or a row's owner); organizations are never deleted. */
  load(em: EntityManager, id: string, locking: Locking = {}): Promise<Organization> {
    return em.findOneOrFail(Organization, { where: { id }, ...lockOption(locking) });
  }

  async byIds(em: EntityManager, ids: string[]): Promise<Map<string, Organization>> {
    const orgs = await em.findBy(Organization, { id: In([...new Set(ids)]) });
    return new Map(orgs.map((o) => [o.id, o]));
  }

  /** The organization with its reseller, one statement: `findOne` with a relation would run a DISTINCT query first (its implicit `take`). */
  findWithParent(em: EntityManager, id: string): Promise<Organization | null> {
    return em.createQueryBuilder(Organization, 'o').leftJoinAndSelect('o.parent', 'parent').where('o.id = :id', { id }).getOne();
  }

  /**
   * What admitting and dialing organizations' calls reads, in one lean statement for all the
   * organizations a dispatch serves: whether each is disabled, its limits and its reseller's
   * ceiling, its carrier. An unknown id is absent from the map.
   */
  async dialingOf(ids: string[]): Promise<Map<string, DialingContext>> {
    const rows = await this.db.query<DialingRow[]>(
      `SELECT o.id, o.disabled, o.max_concurrent_calls, o.max_calls_per_hour, o.carrier_provider,
              p.max_concurrent_calls AS parent_max_concurrent_calls, p.max_calls_per_hour AS parent_max_calls_per_hour,
              o.monthly_spend_limit_micros IS NOT NULL AS spend_limited
         FROM organizations o LEFT JOIN organizations p ON p.id = o.parent_id
        WHERE o.id = ANY($1)`,
      [ids],
    );
    return new Map(
      rows.map((row) => [
        row.id,
        {
          disabled: row.disabled,
          carrierProvider: row.carrier_provider,
          maxConcurrentCalls: row.max_concurrent_calls,
          maxCallsPerHour: row.max_calls_per_hour,
          parent:
            row.parent_max_concurrent_calls === null
              ? null
              : { maxConcurrentCalls: row.parent_max_concurrent_calls, maxCallsPerHour: row.parent_max_calls_per_hour! },
          spendLimited: row.spend_limited,
        },
      ]),
    );
  }

  /**
   * Locks tenants' rows for their spend limit and reads the limits as they are once locked (see
   * src/tenants/spend-limit.ts): `charge` for a transaction charging them (one at a time per
   * tenant), `dial` for one dialing their calls (dials share it and wait for charges). By id, after
   * the calls: the lock order of `CallEngine`.
   */
  async lockSpendLimits(em: EntityManager, ids: string[]): Promise<Map<string, bigint | null>> {
    const rows = await em.query<Array<{ id: string; spend_limit: string | null }>>(
      'SELECT id, monthly_spend_limit_micros AS spend_limit FROM organizations WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE',
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.spend_limit === null ? null : BigInt(r.spend_limit)]));
  }

  /** Share-locks an organization's row for a dialing transaction; whether it is disabled, as locked. */
  async shareLockForDial(em: EntityManager, id: string): Promise<{ disabled: boolean }> {
    const [row] = await em.query<Array<{ disabled: boolean }>>('SELECT disabled FROM organizations WHERE id = $1 FOR SHARE', [id]);
    return { disabled: row?.disabled !== false };
  }

  /** The organization's carrier provider (CONTRACT.md's carrier connection). */
  async carrierProviderOf(id: string): Promise<string> {
    const [row] = await this.db.query<Array<{ carrier_provider: string }>>('SELECT carrier_provider FROM organizations WHERE id = $1', [id]);
    if (!row) throw new Error(`no organization ${id}`);
    return row.carrier_provider;
  }

  /** Each row with its payer's currency, the one it is charged and shown in (a tenant's reseller's). */
  async withPayerCurrency<R extends { payer_org_id: string }>(rows: R[]): Promise<Array<R & { currency: string }>> {
    if (rows.length === 0) return [];
    const payers = await this.db.manager.find(Organization, {
      select: { id: true, currency: true },
      where: { id: In([...new Set(rows.map((r) => r.payer_org_id))]) },
    });
    const currencies = new Map(payers.map((p) => [p.id, p.currency]));
    return rows.map((row) => ({ ...row, currency: currencies.get(row.payer_org_id)! }));
  }

  payerOf(em: EntityManager, orgId: string): Promise<Organization> {
    return em
      .getRepository(Organization)
      .createQueryBuilder('payer')
      .innerJoin(Organization, 'o', `payer.id = ${payerIdSql('o')}`)
      .where('o.id = :orgId', { orgId })
      .getOneOrFail();
  }

  async insert(em: EntityManager, org: NewOrganization): Promise<void> {
    await em.insert(Organization, org);
  }

  async update(em: EntityManager, id: string, changes: OrganizationChanges): Promise<Organization> {
    await em.update(Organization, { id }, changes);
    return this.load(em, id);
  }

  /** Unsets the sender only if it is still `phoneNumber`, so a sender changed meanwhile stays. */
  async clearSmsSender(em: EntityManager, orgId: string, phoneNumber: string): Promise<void> {
    await em.update(Organization, { id: orgId, smsSender: phoneNumber }, { smsSender: null });
  }

  /** Null also when the id is another organization's (never says it exists). */
  async findTenant(sql: Sql, resellerId: string, tenantId: string, { lock = false }: Locking = {}): Promise<TenantRow | null> {
    const condition = tenantsOf(resellerId).and('id = ?', tenantId);
    const [row] = (await sql.query(
      `SELECT ${TENANT.select()} FROM ${TENANT.from()} WHERE ${condition}${lock ? ' FOR UPDATE' : ''}`,
      condition.params,
    )) as TenantRow[];
    return row ?? null;
  }

  async findTenantRef(resellerId: string, tenantId: string): Promise<OrgRef | null> {
    const condition = tenantsOf(resellerId).and('id = ?', tenantId);
    const [row] = await this.db.query<OrgRefRow[]>(`SELECT ${ORG_REF.select()} FROM ${ORG_REF.from()} WHERE ${condition}`, condition.params);
    return row ? orgRefOf(row) : null;
  }

  /** Which of `ids` are the reseller's tenants (any order); `sql`: a transaction's, when the caller holds one. */
  async tenantIdsAmong(resellerId: string, ids: readonly string[], sql: Sql = this.db): Promise<Set<string>> {
    const condition = tenantsOf(resellerId).and('id = ANY(?)', [...ids]);
    const rows = (await sql.query(`SELECT id FROM organizations WHERE ${condition}`, condition.params)) as Array<{ id: string }>;
    return new Set(rows.map((r) => r.id));
  }

  listTenants<V>(resellerId: string, query: PageParams & { external_ref?: string }, present: (row: TenantRow) => V): Promise<Page<V>> {
    const condition = tenantsOf(resellerId).equal('external_ref', query.external_ref);
    return this.reads.run((sql) => listPage(sql, { select: TENANT.select(), from: TENANT.from(), where: condition }, query, present));
  }

  async countTenants(em: EntityManager, resellerId: string): Promise<number> {
    const condition = tenantsOf(resellerId);
    const [{ count }] = await em.query<Array<{ count: number }>>(`SELECT count(*)::int AS count FROM organizations WHERE ${condition}`, condition.params);
    return count;
  }

  async tenantState(tenantId: string): Promise<Pick<Organization, 'disabled' | 'disabledAt'> | null> {
    const [row] = await this.db.query<Array<{ disabled: boolean; disabled_at: Date | null }>>(
      `SELECT disabled, disabled_at FROM organizations WHERE id = $1 AND ${IS_TENANT}`,
      [tenantId],
    );
    return row ? { disabled: row.disabled, disabledAt: row.disabled_at } : null;
  }

  async disabledTenantIds(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM organizations WHERE disabled AND ${IS_TENANT}`);
    return rows.map((r) => r.id);
  }

  async insertMember(em: EntityManager, member: Pick<Member, 'id' | 'orgId' | 'email' | 'capabilities' | 'passwordHash'>): Promise<Member> {
    await em.insert(Member, member);
    return this.findMember(em, member.id);
  }

  findMember(em: EntityManager, id: string): Promise<Member> {
    return em.findOneByOrFail(Member, { id });
  }

  /** With its password hash: sign-in is the one reader of it. */
  findMemberWithPassword(email: string): Promise<Member | null> {
    return this.db.getRepository(Member).createQueryBuilder('m').addSelect('m.passwordHash').where('m.email = :email', { email }).getOne();
  }
}
