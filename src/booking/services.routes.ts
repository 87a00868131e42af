import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { createServiceSchema, listServicesQuery, serviceSchema, updateServiceSchema } from './services.schemas.js';
import { servicesService } from './services.service.js';

/** `/v1/services` (what customers can book): organization settings, so writes need `settings`. */
export function serviceRoutes(api: ApiRouter): void {
  resourceRoutes(api, {
    path: '/services',
    capability: 'settings',
    service: servicesService,
    schemas: { create: createServiceSchema, update: updateServiceSchema, list: listServicesQuery, view: serviceSchema },
  });
}
