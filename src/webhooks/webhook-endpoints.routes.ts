import type { ApiRouter } from '../http/endpoint.js';
import { resourceRoutes } from '../http/resource-routes.js';
import { createWebhookEndpointSchema, listWebhookEndpointsQuery, updateWebhookEndpointSchema, webhookEndpointSchema } from './webhook-endpoints.schemas.js';
import type { WebhookEndpointsService } from './webhook-endpoints.service.js';

/**
 * `/v1/webhook-endpoints` (SPEC.md §4.4, CONTRACT.md "Webhook endpoint"): writes need
 * `webhooks`, reads need none; usable inside a tenant.
 */
export function webhookEndpointRoutes(api: ApiRouter, endpoints: WebhookEndpointsService): void {
  resourceRoutes(api, {
    path: '/webhook-endpoints',
    capability: 'webhooks',
    service: endpoints,
    schemas: { create: createWebhookEndpointSchema, update: updateWebhookEndpointSchema, list: listWebhookEndpointsQuery, view: webhookEndpointSchema },
  });
}
