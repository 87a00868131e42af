import type { ApiRouter } from '../http/endpoint.js';
import { carrierConnectionSchema, type CarrierProvider, carrierSchema } from './connection.schemas.js';
import type { CarrierConnectionService } from './connection.service.js';

/** `/v1/carrier` (CONTRACT.md "Other areas"): the carrier connection; changing it needs `settings`. */
export function carrierRoutes(api: ApiRouter, connection: CarrierConnectionService): void {
  api
    .get('/carrier', {
      summary: 'Read the carrier connection',
      response: carrierConnectionSchema,
      handler: ({ actor }) => connection.read(actor),
    })
    .put<{ provider: CarrierProvider }>('/carrier', {
      summary: 'Connect a carrier',
      capability: 'settings',
      body: carrierSchema,
      response: carrierConnectionSchema,
      handler: ({ actor, body }) => connection.connect(actor, body),
    });
}
