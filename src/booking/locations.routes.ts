import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import type { OrgResourceService } from '../orgs/org-resource.service.js';
import { createLocationSchema, listLocationsQuery, locationSchema, updateLocationSchema } from './locations.schemas.js';
import type { locationShape } from './locations.repository.js';

/** `/v1/locations`: organization settings, so writes need `settings`. */
export function locationRoutes(api: ApiRouter, service: OrgResourceService<typeof locationShape.columns>): void {
  resourceRoutes(api, {
    path: '/locations',
    capability: 'settings',
    service,
    schemas: { create: createLocationSchema, update: updateLocationSchema, list: listLocationsQuery, view: locationSchema },
  });
}
