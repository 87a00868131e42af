import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { CarrierConnections } from './carriers.js';
import type { CarrierProvider } from './connection.schemas.js';

export interface CarrierView {
  provider: string;
}

const presentCarrier = (org: Organization): CarrierView => ({ provider: org.carrierProvider });

/** Which provider an organization's calls, numbers and texts go through; stored on the organization. */
export class CarrierConnectionService implements CarrierConnections {
  constructor(
    private readonly db: DataSource,
    private readonly orgs: OrganizationsRepository,
  ) {}

  async read(actor: Actor): Promise<CarrierView> {
    return presentCarrier(await this.orgs.load(this.db.manager, actor.org.id));
  }

  async connect(actor: Actor, input: { provider: CarrierProvider }): Promise<CarrierView> {
    return presentCarrier(await this.orgs.update(this.db.manager, actor.org.id, { carrierProvider: input.provider }));
  }

  async providerOf(orgId: string): Promise<string> {
    return this.orgs.carrierProviderOf(orgId);
  }
}
