import type { ApiRouter } from '../http/endpoint.js';
import { db } from '../lib/db.js';
import { balanceOf } from './ledger.js';

/** `GET /v1/balance` (CONTRACT.md "Other areas: closed to tenants"): a tenant has no balance. */
export function billingRoutes(api: ApiRouter): void {
  api.get('/balance', {
    tenant: 'forbidden',
    handler: ({ actor }) => balanceOf(db.manager, actor.org.id),
  });
}
