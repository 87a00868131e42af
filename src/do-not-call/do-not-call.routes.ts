import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import type { PageParams } from '../lib/pagination.js';
import type { OrgResourceService } from '../orgs/org-resource.service.js';
import type { doNotCallShape } from './do-not-call.repository.js';
import { createDoNotCallSchema, doNotCallEntrySchema, doNotCallIdParams, listDoNotCallQuery, type CreateDoNotCallInput } from './do-not-call.schemas.js';

/** `/v1/do-not-call` (CONTRACT.md §4): entries are never changed (no PATCH), and no single-entry read is named. */
export function doNotCallRoutes(api: ApiRouter, service: OrgResourceService<typeof doNotCallShape.columns, 'phone_number'>): void {
  api
    .post<CreateDoNotCallInput>('/do-not-call', {
      summary: 'Add a number to the do-not-call list',
      errors: { 409: ['already_listed'] },
      capability: 'operate',
      body: createDoNotCallSchema,
      response: doNotCallEntrySchema,
      handler: ({ actor, body }) => service.create(actor, body),
    })
    .get<PageParams & { phone_number?: string }>('/do-not-call', {
      summary: 'List the do-not-call list',
      query: listDoNotCallQuery,
      response: pageOf(doNotCallEntrySchema),
      handler: ({ actor, query }) => service.list(actor, query),
    })
    .delete<unknown, { id: string }>('/do-not-call/:id', {
      summary: 'Remove a number from the do-not-call list',
      capability: 'operate',
      params: doNotCallIdParams,
      handler: ({ actor, params }) => service.remove(actor, params.id),
    });
}
