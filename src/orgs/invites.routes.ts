import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { createInviteSchema, type InviteInput, inviteSchema, type InvitesQuery, listInvitesQuery } from './invites.schemas.js';
import type { InvitesService } from './invites.service.js';

/** `/v1/invites`: closed inside a tenant (SPEC.md §4.1 rule 2). */
export function inviteRoutes(api: ApiRouter, invites: InvitesService): void {
  api
    .post<InviteInput>('/invites', {
      summary: 'Invite someone to become a member',
      errors: { 409: ['invite_exists'] },
      capability: 'settings',
      tenant: 'forbidden',
      body: createInviteSchema,
      response: inviteSchema,
      handler: ({ actor, body }) => invites.create(actor, body),
    })
    .get<InvitesQuery>('/invites', {
      summary: 'List invites',
      tenant: 'forbidden',
      query: listInvitesQuery,
      response: pageOf(inviteSchema),
      handler: ({ actor, query }) => invites.list(actor, query),
    });
}
