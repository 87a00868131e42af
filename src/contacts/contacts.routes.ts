import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { contactSchema, createContactSchema, listContactsQuery, updateContactSchema } from './contacts.schemas.js';
import { contactsService } from './contacts.service.js';

/** `/v1/contacts` (CONTRACT.md "Other areas"): writes need `operate`. */
export function contactRoutes(api: ApiRouter): void {
  resourceRoutes(api, {
    path: '/contacts',
    capability: 'operate',
    service: contactsService,
    errors: { write: { 409: ['contact_exists'] }, remove: { 409: ['contact_in_use'] } },
    schemas: { create: createContactSchema, update: updateContactSchema, list: listContactsQuery, view: contactSchema },
  });
}
