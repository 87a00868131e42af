import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { listNumbersQuery, phoneNumberSchema, provisionNumberSchema, updateNumberSchema } from './phone-numbers.schemas.js';
import type { PhoneNumbersService } from './phone-numbers.service.js';

/** `/v1/phone-numbers` (CONTRACT.md "Other areas"): numbers are organization settings, so writes need `settings`. */
export function phoneNumberRoutes(api: ApiRouter, numbers: PhoneNumbersService): void {
  resourceRoutes(api, {
    path: '/phone-numbers',
    capability: 'settings',
    service: numbers,
    errors: { write: { 404: ['agent_not_found'], 409: ['phone_number_taken', 'phone_number_unavailable'] } },
    schemas: { create: provisionNumberSchema, update: updateNumberSchema, list: listNumbersQuery, view: phoneNumberSchema },
  });
}
