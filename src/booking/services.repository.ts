import type { DataSource } from 'typeorm';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { Reads } from '../lib/reads.js';

/** The one declaration of a service's fields. */
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

/** What customers can book, shown on the booking page. */
export class ServicesRepository extends OrgResourceRepository<typeof serviceShape.columns> {
  constructor(db: DataSource, reads?: Reads) {
    super(db, { shape: serviceShape, resource: 'service', idPrefix: 'svc' }, reads);
  }
}
