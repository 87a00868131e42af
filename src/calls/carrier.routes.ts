import type { ApiRouter } from '../http/endpoint.js';
import { carrierConnectionSchema, type CarrierProvider, carrierSchema } from './carrier.schemas.js';
import { connectCarrier, readCarrier } from './carrier.service.js';

/** `/v1/carrier` (CONTRACT.md "Other areas"): the carrier connection; changing it needs `settings`. */
export function carrierRoutes(api: ApiRouter): void {
  api
    .get('/carrier', {
      summary: 'Read the carrier connection',
      response: carrierConnectionSchema,
      handler: ({ actor }) => readCarrier(actor),
    })
    .put<{ provider: CarrierProvider }>('/carrier', {
      summary: 'Connect a carrier',
      capability: 'settings',
      body: carrierSchema,
      response: carrierConnectionSchema,
      handler: ({ actor, body }) => connectCarrier(actor, body),
    });
}
