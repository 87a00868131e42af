import type { ApiRouter } from '../http/endpoint.js';
import { type OrganizationChanges, organizationSchema, updateOrganizationSchema } from './organization.schemas.js';
import { readOrganization, updateOrganization } from './organization.service.js';

/** `/v1/organization` (CONTRACT.md "Other areas"): the acting organization's name and time zone. */
export function organizationRoutes(api: ApiRouter): void {
  api
    .get('/organization', {
      summary: 'Read the acting organization',
      response: organizationSchema,
      handler: ({ actor }) => readOrganization(actor),
    })
    .patch<OrganizationChanges>('/organization', {
      summary: "Change the acting organization's name or time zone",
      capability: 'settings',
      body: updateOrganizationSchema,
      response: organizationSchema,
      handler: ({ actor, body }) => updateOrganization(actor, body),
    });
}
