import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { tenantIdParams } from '../tenants/tenants.schemas.js';
import { TENANT_AREA } from '../tenants/tenants.routes.js';
import { tenantUsageListQuery, tenantUsageRowSchema, usageQuery, usageSchema, type TenantUsageListQuery, type UsageQuery } from './usage.schemas.js';
import type { UsageService } from './usage.service.js';

/**
 * `GET /v1/tenants/{id}/usage` and `GET /v1/tenant-usage` (CONTRACT.md §5 "Usage of every
 * tenant"): tenant endpoints (resellers only, closed inside a tenant), reads.
 */
export function usageRoutes(api: ApiRouter, usage: UsageService): void {
  api
    .get<UsageQuery, { id: string }>('/tenants/:id/usage', {
      summary: "Read a tenant's usage over a window",
      errors: { 400: ['invalid_window'] },
      ...TENANT_AREA,
      params: tenantIdParams,
      query: usageQuery,
      response: usageSchema,
      handler: ({ actor, params, query }) => usage.tenantUsage(actor, params.id, query),
    })
    .get<TenantUsageListQuery>('/tenant-usage', {
      summary: 'Read the usage of every tenant over a window, in byte order of tenant id (JSON pages, or all at once as CSV)',
      errors: { 400: ['invalid_window'] },
      ...TENANT_AREA,
      query: tenantUsageListQuery,
      response: pageOf(tenantUsageRowSchema),
      csv: 'every tenant at once (`limit` and `cursor` play no part), streamed: a header row `tenant_id,name,external_ref,disabled,since,until,completed_calls,talk_time_seconds,currency,charges_calls,charges_other,charges_total,billable_calls,billable_other,billable_total`, then one record per tenant with the values of its JSON row (RFC 4180: CRLF line ends, a field holding a comma, a quote or a line break quoted; `disabled` as `true`/`false`, a null `external_ref` empty), as the attachment `tenant-usage-<since>-<until>.csv` (times in ISO 8601 basic form, such as `20261101T000000Z`).',
      handler: ({ actor, query, format }) => (format === 'csv' ? usage.usageOfTenantsCsv(actor, query) : usage.usageOfTenants(actor, query)),
    });
}
