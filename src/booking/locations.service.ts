import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { Location } from './location.entity.js';
import type { LocationInput } from './locations.schemas.js';

export interface LocationView {
  id: string;
  name: string;
  address: string;
  is_main: boolean;
  created_at: string;
  updated_at: string;
}

interface LocationRow {
  id: string;
  name: string;
  address: string;
  is_main: boolean;
  created_at: Date;
  updated_at: Date;
}

const presentLocation = (row: LocationRow): LocationView => ({
  id: row.id,
  name: row.name,
  address: row.address,
  is_main: row.is_main,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** The places where the organization serves its customers (shown on its booking page). */
export const locationsService = new OrgResourceTable<Location, LocationRow, LocationView, LocationInput, Partial<LocationInput>>({
  entity: Location,
  table: 'locations',
  resource: 'location',
  idPrefix: 'loc',
  columns: 'id, name, address, is_main, created_at, updated_at',
  present: presentLocation,
  fields: { name: 'name', address: 'address' },
});
