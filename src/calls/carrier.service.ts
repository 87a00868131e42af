import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { changeOrganization, loadOrganization } from '../orgs/organization.service.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { CarrierProvider } from './carrier.schemas.js';

export interface CarrierView {
  provider: string;
}

const presentCarrier = (org: Organization): CarrierView => ({ provider: org.carrierProvider });

/** `GET /v1/carrier`: the acting organization's carrier connection. */
export async function readCarrier(actor: Actor): Promise<CarrierView> {
  return presentCarrier(await loadOrganization(db.manager, actor.org.id));
}

/** Connects the acting organization to a carrier: its calls and new numbers go through it. */
export async function connectCarrier(actor: Actor, input: { provider: CarrierProvider }): Promise<CarrierView> {
  return presentCarrier(await changeOrganization(db.manager, actor.org.id, { carrierProvider: input.provider }));
}
