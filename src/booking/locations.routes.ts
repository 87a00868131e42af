import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { createLocationSchema, listLocationsQuery, locationSchema, updateLocationSchema } from './locations.schemas.js';
import { locationsService } from './locations.service.js';

/** `/v1/locations`: organization settings, so writes need `settings`. */
export function locationRoutes(api: ApiRouter): void {
  resourceRoutes(api, {
    path: '/locations',
    capability: 'settings',
    service: locationsService,
    schemas: { create: createLocationSchema, update: updateLocationSchema, list: listLocationsQuery, view: locationSchema },
  });
}
