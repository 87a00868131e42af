import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams, isoTime, responseSchema, timezone } from '../http/schemas.js';
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
export const updateLimitsSchema = Joi.object({ max_concurrent_calls: limit, max_calls_per_hour: limit }).min(1);

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

/** CONTRACT.md "Limits": the tenant's limits and the reseller's ceiling over them. */
export const limitsSchema = responseSchema('TenantLimits', { ...callLimits, ceiling: Joi.object(callLimits) });
