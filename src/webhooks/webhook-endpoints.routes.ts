import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { idParams } from '../http/schemas.js';
import {
  createWebhookEndpointSchema,
  listWebhookEndpointsQuery,
  rotateSecretSchema,
  updateWebhookEndpointSchema,
  webhookEndpointSchema,
  type SecretRotationInput,
} from './webhook-endpoints.schemas.js';
import type { WebhookEndpointsService } from './webhook-endpoints.service.js';

/** `/v1/webhook-endpoints` (SPEC.md §4.4): writes need `webhooks`, reads none; usable inside a tenant. */
export function webhookEndpointRoutes(api: ApiRouter, endpoints: WebhookEndpointsService): void {
  resourceRoutes(api, {
    path: '/webhook-endpoints',
    capability: 'webhooks',
    service: endpoints,
    schemas: { create: createWebhookEndpointSchema, update: updateWebhookEndpointSchema, list: listWebhookEndpointsQuery, view: webhookEndpointSchema },
  });
  api.post<SecretRotationInput, unknown, { id: string }>('/webhook-endpoints/:id/rotate-secret', {
    summary: 'Rotate the secret of a webhook endpoint, the previous one signing too for an overlap',
    capability: 'webhooks',
    params: idParams(endpoints.resource),
    body: rotateSecretSchema,
    response: webhookEndpointSchema,
    status: 200,
    handler: ({ actor, params, body }) => endpoints.rotateSecret(actor, params.id, body),
  });
}
