import type { DataSource } from 'typeorm';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';

/** A service's row: the one declaration of its fields (the API shows it with ISO times). */
export const serviceShape = rowShape('services', {
  id: column<string>(),
  name: column<string>(),
  description: column<string>(),
  duration_minutes: column<number>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
});

export type ServiceRow = RowOf<typeof serviceShape.columns>;
export type ServiceView = Presented<ServiceRow>;

/**
 * What customers can book (shown on the organization's booking page). Tenant provisioning
 * creates a tenant's starter services with `insertRows(em, tenantId, services)`.
 */
export class ServicesRepository extends OrgResourceRepository<typeof serviceShape.columns> {
  constructor(db: DataSource) {
    super(db, { shape: serviceShape, resource: 'service', idPrefix: 'svc' });
  }
}
