import type { DataSource } from 'typeorm';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { Reads } from '../lib/reads.js';

/** The one declaration of a location's fields. */
export const locationShape = rowShape('locations', {
  id: column<string>(),
  name: column<string>(),
  address: column<string>(),
  /** A tenant gets one at creation; not writable through the API. */
  is_main: column<boolean>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
});

export type LocationRow = RowOf<typeof locationShape.columns>;
export type LocationView = Presented<LocationRow>;

/** The organization's locations, shown on its booking page. */
export class LocationsRepository extends OrgResourceRepository<typeof locationShape.columns> {
  constructor(db: DataSource, reads?: Reads) {
    super(db, { shape: locationShape, resource: 'location', idPrefix: 'loc' }, reads);
  }
}
