import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { Service } from './service.entity.js';
import type { ServiceInput } from './services.schemas.js';

export interface ServiceView {
  id: string;
  name: string;
  description: string;
  duration_minutes: number;
  created_at: string;
  updated_at: string;
}

interface ServiceRow {
  id: string;
  name: string;
  description: string;
  duration_minutes: number;
  created_at: Date;
  updated_at: Date;
}

const presentService = (row: ServiceRow): ServiceView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  duration_minutes: row.duration_minutes,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** What customers can book (shown on the organization's booking page). */
export const servicesService = new OrgResourceTable<Service, ServiceRow, ServiceView, ServiceInput, Partial<ServiceInput>>({
  entity: Service,
  table: 'services',
  resource: 'service',
  idPrefix: 'svc',
  columns: 'id, name, description, duration_minutes, created_at, updated_at',
  present: presentService,
  fields: { name: 'name', description: 'description', duration_minutes: 'durationMinutes' },
});
