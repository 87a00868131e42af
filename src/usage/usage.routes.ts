import type { ApiRouter } from '../http/endpoint.js';
import { tenantIdParams } from '../tenants/tenants.schemas.js';
import { TENANT_AREA } from '../tenants/tenants.routes.js';
import { usageQuery, usageSchema, type UsageQuery } from './usage.schemas.js';
import type { UsageService } from './usage.service.js';

/** `GET /v1/tenants/{id}/usage`: a tenant endpoint (resellers only, closed inside a tenant). */
export function usageRoutes(api: ApiRouter, usage: UsageService): void {
  api.get<UsageQuery, { id: string }>('/tenants/:id/usage', {
    summary: "Read a tenant's usage over a window",
    errors: { 400: ['invalid_window'] },
    ...TENANT_AREA,
    params: tenantIdParams,
    query: usageQuery,
    response: usageSchema,
    handler: ({ actor, params, query }) => usage.tenantUsage(actor, params.id, query),
  });
}
