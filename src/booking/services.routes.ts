import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import type { OrgResourceService } from '../orgs/org-resource.service.js';
import { createServiceSchema, listServicesQuery, serviceSchema, updateServiceSchema } from './services.schemas.js';
import type { serviceShape } from './services.repository.js';

/** `/v1/services` (what customers can book): organization settings, so writes need `settings`. */
export function serviceRoutes(api: ApiRouter, service: OrgResourceService<typeof serviceShape.columns>): void {
  resourceRoutes(api, {
    path: '/services',
    capability: 'settings',
    service,
    schemas: { create: createServiceSchema, update: updateServiceSchema, list: listServicesQuery, view: serviceSchema },
  });
}
