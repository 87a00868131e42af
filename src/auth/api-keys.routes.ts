import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import { apiKeySchema, createApiKeySchema, keyIdParams, listApiKeysQuery, newApiKeySchema, type CreateApiKeyInput } from './api-keys.schemas.js';
import type { ApiKeysService } from './api-keys.service.js';

/** SPEC.md §4.3, CONTRACT.md §5 (tenant-restricted keys). Keys are closed inside a tenant (§4.1 rule 2). */
export function apiKeyRoutes(api: ApiRouter, keys: ApiKeysService): void {
  api
    .post<CreateApiKeyInput>('/api-keys', {
      summary: 'Create an API key',
      errors: { 429: ['rate_limited'] },
      capability: 'api_keys',
      tenant: 'forbidden',
      body: createApiKeySchema,
      response: newApiKeySchema,
      handler: ({ actor, body }) => keys.create(actor, body),
    })
    .get<PageParams>('/api-keys', {
      summary: 'List API keys',
      tenant: 'forbidden',
      query: listApiKeysQuery,
      response: pageOf(apiKeySchema),
      handler: ({ actor, query }) => keys.list(actor, query),
    })
    .delete<unknown, { key_id: string }>('/api-keys/:key_id', {
      summary: 'Revoke an API key',
      capability: 'api_keys',
      tenant: 'forbidden',
      params: keyIdParams,
      handler: async ({ actor, params }) => keys.revoke(actor, params.key_id),
    });
}
