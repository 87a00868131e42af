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

/**
 * An organization's carrier connection (`/v1/carrier`): which provider its calls, new numbers
 * and texts go through. Stored on the organization (`carrier_provider`), read and written
 * through the organizations domain.
 */
export class CarrierConnectionService implements CarrierConnections {
  constructor(
    private readonly db: DataSource,
    private readonly orgs: OrganizationsRepository,
  ) {}

  /** `GET /v1/carrier`: the acting organization's carrier connection. */
  async read(actor: Actor): Promise<CarrierView> {
    return presentCarrier(await this.orgs.load(this.db.manager, actor.org.id));
  }

  /** Connects the acting organization to a carrier: its calls and new numbers go through it. */
  async connect(actor: Actor, input: { provider: CarrierProvider }): Promise<CarrierView> {
    return presentCarrier(await this.orgs.update(this.db.manager, actor.org.id, { carrierProvider: input.provider }));
  }

  async providerOf(orgId: string): Promise<string> {
    return (await this.orgs.load(this.db.manager, orgId)).carrierProvider;
  }
}
