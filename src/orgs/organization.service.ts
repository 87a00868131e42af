import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import type { Organization } from './organization.entity.js';
import type { OrganizationChanges as SettingsChanges } from './organization.schemas.js';
import type { OrganizationsRepository } from './organizations.repository.js';

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

/** `/v1/organization`: the acting organization (a tenant, with `X-Tenant-Id`). */
export class OrganizationService {
  constructor(
    private readonly db: DataSource,
    private readonly orgs: OrganizationsRepository,
  ) {}

  async read(actor: Actor): Promise<OrganizationView> {
    return presentOrganization(await this.orgs.load(this.db.manager, actor.org.id));
  }

  async update(actor: Actor, input: SettingsChanges): Promise<OrganizationView> {
    return presentOrganization(await this.orgs.update(this.db.manager, actor.org.id, input));
  }
}
