import Joi from 'joi';
import { amount, rate, responseSchema } from '../http/schemas.js';
import type { Micros } from '../lib/money.js';

/**
 * `PUT /v1/tenants/{id}/prices`: both prices, each a rate (a decimal string, not negative, at
 * most 1,000.000000, at most 6 fractional digits). A PUT states the prices whole: leaving one
 * out is 400, not "keep the old one".
 */
export const setResalePricesSchema = Joi.object({
  per_minute: rate()
    .required()
    .description('Billed to the tenant per started second of a call, per minute: a decimal string, 0 to 1000, at most 6 fractional digits ("0.200000").'),
  per_text: rate().required().description('Billed to the tenant per text: a decimal string, 0 to 1000, at most 6 fractional digits ("0.020000").'),
});

export interface ResalePricesInput {
  per_minute: Micros;
  per_text: Micros;
}

/** CONTRACT.md §4 "Resale prices": the prices in force for a tenant. */
export const tenantPricesSchema = responseSchema('TenantPrices', {
  tenant_id: Joi.string(),
  per_minute: amount().description("Billed to the tenant per started second of a call, per minute; the reseller's own `per_minute` rate until prices are set."),
  per_text: amount().description("Billed to the tenant per text; the reseller's own `per_text` rate until prices are set."),
  currency: Joi.string().description("The reseller's currency (a tenant's is always its reseller's)."),
});
