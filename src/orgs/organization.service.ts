import type { EntityManager } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { Organization } from './organization.entity.js';
import type { OrganizationChanges } from './organization.schemas.js';

/**
 * The acting organization's row. It exists: the request's credential was resolved from it
 * (or, inside a tenant, from the reseller that owns it), and organizations are never deleted.
 */
export function loadOrganization(em: EntityManager, orgId: string): Promise<Organization> {
  return em.findOneByOrFail(Organization, { id: orgId });
}

/** Changes settings of the acting organization and returns it as saved. */
export async function changeOrganization(em: EntityManager, orgId: string, changes: Partial<Organization>): Promise<Organization> {
  await em.update(Organization, { id: orgId }, changes);
  return loadOrganization(em, orgId);
}

export interface OrganizationView {
  id: string;
  name: string;
  timezone: string;
  created_at: string;
}

const presentOrganization = (org: Organization): OrganizationView => ({
  id: org.id,
  name: org.name,
  timezone: org.timezone,
  created_at: org.createdAt.toISOString(),
});

/** `GET /v1/organization`: the acting organization (a tenant, with `X-Tenant-Id`). */
export async function readOrganization(actor: Actor): Promise<OrganizationView> {
  return presentOrganization(await loadOrganization(db.manager, actor.org.id));
}

/** Renames the acting organization or moves it to another time zone. */
export async function updateOrganization(actor: Actor, input: OrganizationChanges): Promise<OrganizationView> {
  return presentOrganization(await changeOrganization(db.manager, actor.org.id, input));
}
