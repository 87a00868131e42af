import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { amount, idParams, isoTime, nonNegativeMoney, responseSchema, timezone } from '../http/schemas.js';
import { MAX_BALANCE_MICROS, type Micros } from '../lib/money.js';
import { INDUSTRIES, type Industry } from './industry-catalog.js';

const externalRef = Joi.string().trim().min(1).max(200);

export const createTenantSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  timezone: timezone().required(),
  industry: Joi.string()
    .valid(...INDUSTRIES)
    .required()
    .messages({ 'any.only': `{{#label}} must be one of ${INDUSTRIES.join(', ')}` }),
  external_ref: externalRef,
});

export const updateTenantSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200),
  timezone: timezone(),
  external_ref: externalRef.allow(null),
  disabled: Joi.boolean(),
}).min(1);

export const listTenantsQuery = Joi.object({ ...pageQuery, external_ref: externalRef });

const limit = Joi.number().integer().strict().min(1);
export const updateLimitsSchema = Joi.object({
  max_concurrent_calls: limit,
  max_calls_per_hour: limit,
  monthly_spend_limit: nonNegativeMoney(MAX_BALANCE_MICROS)
    .allow(null)
    .description(
      'What the reseller\'s balance may be charged for the tenant in a calendar month (UTC), in the reseller\'s currency: a decimal string, at most 6 fractional digits ("50.000000"); null: no limit.',
    ),
}).min(1);

export const tenantIdParams = idParams('tenant');

export interface CreateTenantInput {
  name: string;
  timezone: string;
  industry: Industry;
  external_ref?: string;
}

export interface UpdateTenantInput {
  name?: string;
  timezone?: string;
  external_ref?: string | null;
  disabled?: boolean;
}

export interface LimitsInput {
  max_concurrent_calls?: number;
  max_calls_per_hour?: number;
  monthly_spend_limit?: Micros | null;
}

/** CONTRACT.md "Tenant". */
export const tenantSchema = responseSchema('Tenant', {
  id: Joi.string(),
  name: Joi.string(),
  timezone: Joi.string(),
  industry: Joi.string()
    .valid(...INDUSTRIES)
    .allow(null),
  external_ref: Joi.string().allow(null),
  disabled: Joi.boolean(),
  created_at: isoTime(),
});

const callLimits = { max_concurrent_calls: Joi.number().integer(), max_calls_per_hour: Joi.number().integer() };

/** CONTRACT.md "Limits": the tenant's limits and the reseller's ceiling over them; §5: its monthly spend limit and this month's spend. */
export const limitsSchema = responseSchema('TenantLimits', {
  ...callLimits,
  ceiling: Joi.object(callLimits),
  monthly_spend_limit: amount()
    .allow(null)
    .description(
      'The most the tenant may be charged in a calendar month (UTC); null: no limit. Once `spent_this_month` is at or above it, its calls are not placed nor dialed and its charged texts are not sent.',
    ),
  spent_this_month: amount().description(
    "What the reseller's balance was charged for the tenant since the start of the current calendar month (UTC): `charges.total` of its usage for the month.",
  ),
  currency: Joi.string().description("The reseller's currency, that of both amounts."),
});
