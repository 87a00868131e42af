import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { pageOfItems, type PageParams } from '../lib/pagination.js';
import { db } from '../lib/db.js';
import { addOnSchema, balanceSchema, billingListQuery, paymentSchema, planSchema, receiptSchema, referralsSchema } from './billing.schemas.js';
import { listAddOns, listPlans } from './catalog.js';
import { listPayments, listReceipts } from './credits.js';
import { balanceOf } from './ledger.js';

/**
 * The billing area (CONTRACT.md "Other areas: closed to tenants"): the paying organization's
 * money. A tenant pays nothing itself, so every route here is closed inside a tenant.
 */
export function billingRoutes(api: ApiRouter): void {
  api
    .get('/balance', {
      summary: 'Read the account balance',
      tenant: 'forbidden',
      response: balanceSchema,
      handler: ({ actor }) => balanceOf(db.manager, actor.org.id),
    })
    .get<PageParams>('/payments', {
      summary: 'List payments',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(paymentSchema),
      handler: ({ actor, query }) => listPayments(actor, query),
    })
    .get<PageParams>('/receipts', {
      summary: 'List receipts',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(receiptSchema),
      handler: ({ actor, query }) => listReceipts(actor, query),
    })
    .get<PageParams>('/plans', {
      summary: 'List plans',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(planSchema),
      handler: ({ actor, query }) => listPlans(actor, query),
    })
    .get<PageParams>('/add-ons', {
      summary: 'List add-ons',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(addOnSchema),
      handler: async ({ query }) => listAddOns(query),
    })
    // There is no referral program yet: the list exists, empty, with its tenant rule.
    .get<PageParams>('/referrals', {
      summary: 'List referrals (always empty: there is no referral program yet)',
      tenant: 'forbidden',
      query: billingListQuery,
      response: referralsSchema,
      handler: async ({ query }) => pageOfItems([], query),
    });
}
