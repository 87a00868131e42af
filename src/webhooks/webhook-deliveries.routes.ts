import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import {
  deliveryIdParams,
  deliverySchema,
  endpointIdParams,
  listDeliveriesQuery,
  recoverSchema,
  recoverySchema,
  type DeliveryFilters,
} from './webhook-deliveries.schemas.js';
import type { WebhookDeliveriesService } from './webhook-deliveries.service.js';

/** CONTRACT.md "Webhook delivery" and the endpoint `recover` route. */
export function webhookDeliveryRoutes(api: ApiRouter, deliveries: WebhookDeliveriesService): void {
  api
    .get<PageParams & DeliveryFilters>('/webhook-deliveries', {
      summary: 'List webhook deliveries',
      query: listDeliveriesQuery,
      response: pageOf(deliverySchema),
      handler: ({ actor, query }) => deliveries.list(actor, query),
    })
    .get<unknown, { id: string }>('/webhook-deliveries/:id', {
      summary: 'Read a webhook delivery with its attempts',
      params: deliveryIdParams,
      response: deliverySchema,
      handler: ({ actor, params }) => deliveries.get(actor, params.id),
    })
    .post<unknown, unknown, { id: string }>('/webhook-deliveries/:id/retry', {
      summary: 'Deliver a webhook delivery again',
      capability: 'webhooks',
      params: deliveryIdParams,
      response: deliverySchema,
      status: 202,
      handler: ({ actor, params }) => deliveries.retry(actor, params.id),
    })
    .post<{ since: string }, unknown, { id: string }>('/webhook-endpoints/:id/recover', {
      summary: 'Deliver again every failed delivery of an endpoint since a time',
      capability: 'webhooks',
      params: endpointIdParams,
      body: recoverSchema,
      response: recoverySchema,
      status: 202,
      handler: ({ actor, params, body }) => deliveries.recover(actor, params.id, new Date(body.since)),
    });
}
