import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { formatMoney } from '../lib/money.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import { resalePrices } from './charges.js';
import type { ResalePricesInput } from './resale-prices.schemas.js';

export interface TenantPricesView {
  tenant_id: string;
  per_minute: string;
  per_text: string;
  currency: string;
}

/** What a reseller bills each tenant; kept on the tenant's row, where a call's ending reads them. */
export class ResalePricesService {
  constructor(
    private readonly db: DataSource,
    private readonly orgs: Pick<OrganizationsRepository, 'findWithParent' | 'update'>,
    private readonly tenants: Pick<TenantsService, 'findOwn'>,
  ) {}

  async get(actor: Actor, tenantId: string): Promise<TenantPricesView> {
    await this.tenants.findOwn(actor, tenantId);
    return present((await this.orgs.findWithParent(this.db.manager, tenantId))!);
  }

  /** Ended calls and texts keep what they were billed; the new prices apply from the commit on. */
  async set(actor: Actor, tenantId: string, input: ResalePricesInput): Promise<TenantPricesView> {
    await this.tenants.findOwn(actor, tenantId);
    await this.orgs.update(this.db.manager, tenantId, { resalePerMinuteMicros: input.per_minute, resalePerTextMicros: input.per_text });
    return this.get(actor, tenantId);
  }
}

function present(tenant: Organization): TenantPricesView {
  const reseller = tenant.parent!;
  const prices = resalePrices(tenant, reseller)!;
  return { tenant_id: tenant.id, per_minute: formatMoney(prices.perMinute), per_text: formatMoney(prices.perText), currency: reseller.currency };
}
