import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import {
  createTenantSchema,
  limitsSchema,
  listTenantsQuery,
  tenantIdParams,
  tenantSchema,
  updateLimitsSchema,
  updateTenantSchema,
  type CreateTenantInput,
  type LimitsInput,
  type UpdateTenantInput,
} from './tenants.schemas.js';
import { requireReseller, type TenantsService } from './tenants.service.js';

/** The tenant endpoints (SPEC.md §4.1): resellers only, and closed inside a tenant. */
export const TENANT_AREA = { tenant: 'forbidden', guard: requireReseller } as const;

export function tenantRoutes(api: ApiRouter, tenants: TenantsService): void {
  api
    .post<CreateTenantInput>('/tenants', {
      summary: 'Create a tenant',
      errors: { 409: ['tenant_limit_reached'] },
      ...TENANT_AREA,
      capability: 'settings',
      body: createTenantSchema,
      response: tenantSchema,
      handler: ({ actor, body }) => tenants.create(actor, body),
    })
    .get<PageParams & { external_ref?: string }>('/tenants', {
      summary: 'List tenants',
      ...TENANT_AREA,
      query: listTenantsQuery,
      response: pageOf(tenantSchema),
      handler: ({ actor, query }) => tenants.list(actor, query),
    })
    .get<unknown, { id: string }>('/tenants/:id', {
      summary: 'Read a tenant',
      ...TENANT_AREA,
      params: tenantIdParams,
      response: tenantSchema,
      handler: ({ actor, params }) => tenants.get(actor, params.id),
    })
    .patch<UpdateTenantInput, unknown, { id: string }>('/tenants/:id', {
      summary: 'Change a tenant, or disable or enable it',
      ...TENANT_AREA,
      capability: 'settings',
      params: tenantIdParams,
      body: updateTenantSchema,
      response: tenantSchema,
      handler: ({ actor, params, body }) => tenants.update(actor, params.id, body),
    })
    .get<unknown, { id: string }>('/tenants/:id/limits', {
      summary: "Read a tenant's limits and this month's spend",
      ...TENANT_AREA,
      params: tenantIdParams,
      response: limitsSchema,
      handler: ({ actor, params }) => tenants.limits(actor, params.id),
    })
    .patch<LimitsInput, unknown, { id: string }>('/tenants/:id/limits', {
      summary: "Change a tenant's call limits or monthly spend limit",
      errors: { 422: ['above_reseller_limit'] },
      ...TENANT_AREA,
      capability: 'settings',
      params: tenantIdParams,
      body: updateLimitsSchema,
      response: limitsSchema,
      handler: ({ actor, params, body }) => tenants.updateLimits(actor, params.id, body),
    });
}
