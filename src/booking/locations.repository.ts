import type { DataSource } from 'typeorm';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';

/** A location's row: the one declaration of its fields (the API shows it with ISO times). */
export const locationShape = rowShape('locations', {
  id: column<string>(),
  name: column<string>(),
  address: column<string>(),
  /** The organization's main location (a tenant gets one at creation); not writable through the API. */
  is_main: column<boolean>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
});

export type LocationRow = RowOf<typeof locationShape.columns>;
export type LocationView = Presented<LocationRow>;

/**
 * The places where the organization serves its customers (shown on its booking page). Tenant
 * provisioning creates a tenant's main location with `insertRow(em, tenantId, { ..., is_main: true })`.
 */
export class LocationsRepository extends OrgResourceRepository<typeof locationShape.columns> {
  constructor(db: DataSource) {
    super(db, { shape: locationShape, resource: 'location', idPrefix: 'loc' });
  }
}
