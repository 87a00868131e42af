import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import { callIdParams, callSchema, type CreateCallInput, createCallSchema, listCallsQuery } from './calls.schemas.js';
import type { CallsService } from './calls.service.js';

/** CONTRACT.md "Calls": place (capability `operate`), list and read calls. */
export function callRoutes(api: ApiRouter, calls: CallsService): void {
  api
    .post<CreateCallInput>('/calls', {
      summary: 'Place an outbound call',
      errors: { 402: ['insufficient_balance', 'spend_limit_reached'], 404: ['agent_not_found', 'contact_not_found', 'campaign_not_found'] },
      capability: 'operate',
      body: createCallSchema,
      response: callSchema,
      handler: ({ actor, body }) => calls.create(actor, body),
    })
    .get<PageParams & { status?: string; direction?: string; campaign_id?: string }>('/calls', {
      summary: 'List calls',
      query: listCallsQuery,
      response: pageOf(callSchema),
      handler: ({ actor, query }) => calls.list(actor, query),
    })
    .get<unknown, { id: string }>('/calls/:id', {
      summary: 'Read a call',
      params: callIdParams,
      response: callSchema,
      handler: ({ actor, params }) => calls.get(actor, params.id),
    });
}
