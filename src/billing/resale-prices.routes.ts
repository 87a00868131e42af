import type { ApiRouter } from '../http/endpoint.js';
import { tenantIdParams } from '../tenants/tenants.schemas.js';
import { TENANT_AREA } from '../tenants/tenants.routes.js';
import { setResalePricesSchema, tenantPricesSchema, type ResalePricesInput } from './resale-prices.schemas.js';
import type { ResalePricesService } from './resale-prices.service.js';

/** `/v1/tenants/{id}/prices` (CONTRACT.md §4 "Resale prices"): tenant endpoints (resellers only, closed inside a tenant). */
export function resalePriceRoutes(api: ApiRouter, prices: ResalePricesService): void {
  api
    .get<unknown, { id: string }>('/tenants/:id/prices', {
      summary: "Read a tenant's resale prices (the reseller's own rates until set)",
      ...TENANT_AREA,
      params: tenantIdParams,
      response: tenantPricesSchema,
      handler: ({ actor, params }) => prices.get(actor, params.id),
    })
    .put<ResalePricesInput, unknown, { id: string }>('/tenants/:id/prices', {
      summary: "Set a tenant's resale prices (what the tenant is billed)",
      ...TENANT_AREA,
      capability: 'settings',
      params: tenantIdParams,
      body: setResalePricesSchema,
      response: tenantPricesSchema,
      handler: ({ actor, params, body }) => prices.set(actor, params.id, body),
    });
}
