import type { ApiRouter } from '../http/endpoint.js';
import { type OrganizationChanges, organizationSchema, updateOrganizationSchema } from './organization.schemas.js';
import type { OrganizationService } from './organization.service.js';

/** `/v1/organization` (CONTRACT.md "Other areas"): the acting organization's name and time zone. */
export function organizationRoutes(api: ApiRouter, organization: OrganizationService): void {
  api
    .get('/organization', {
      summary: 'Read the acting organization',
      response: organizationSchema,
      handler: ({ actor }) => organization.read(actor),
    })
    .patch<OrganizationChanges>('/organization', {
      summary: "Change the acting organization's name or time zone",
      capability: 'settings',
      body: updateOrganizationSchema,
      response: organizationSchema,
      handler: ({ actor, body }) => organization.update(actor, body),
    });
}
