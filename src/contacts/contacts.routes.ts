import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import type { OrgResourceService } from '../orgs/org-resource.service.js';
import { contactSchema, createContactSchema, listContactsQuery, updateContactSchema } from './contacts.schemas.js';
import type { contactShape } from './contacts.repository.js';

/** `/v1/contacts` (CONTRACT.md "Other areas"): writes need `operate`. */
export function contactRoutes(api: ApiRouter, service: OrgResourceService<typeof contactShape.columns, 'phone_number'>): void {
  resourceRoutes(api, {
    path: '/contacts',
    capability: 'operate',
    service,
    errors: { write: { 409: ['contact_exists'] }, remove: { 409: ['contact_in_use'] } },
    schemas: { create: createContactSchema, update: updateContactSchema, list: listContactsQuery, view: contactSchema },
  });
}
