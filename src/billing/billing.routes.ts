import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { pageOfItems, type PageParams } from '../lib/pagination.js';
import { addOnSchema, balanceSchema, billingListQuery, paymentSchema, planSchema, receiptSchema, referralsSchema } from './billing.schemas.js';
import type { BillingService } from './billing.service.js';
import { listAddOns } from './catalog.js';

/** The paying organization's money: a tenant pays nothing itself, so all of it is closed inside a tenant. */
export function billingRoutes(api: ApiRouter, billing: BillingService): void {
  api
    .get('/balance', {
      summary: 'Read the account balance',
      tenant: 'forbidden',
      response: balanceSchema,
      handler: ({ actor }) => billing.balance(actor),
    })
    .get<PageParams>('/payments', {
      summary: 'List payments',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(paymentSchema),
      handler: ({ actor, query }) => billing.payments(actor, query),
    })
    .get<PageParams>('/receipts', {
      summary: 'List receipts',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(receiptSchema),
      handler: ({ actor, query }) => billing.receipts(actor, query),
    })
    .get<PageParams>('/plans', {
      summary: 'List plans',
      tenant: 'forbidden',
      query: billingListQuery,
      response: pageOf(planSchema),
      handler: ({ actor, query }) => billing.plans(actor, query),
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
