import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { amount, isoTime, responseSchema, timeInput } from '../http/schemas.js';
import type { PageParams } from '../lib/pagination.js';
import { invalidBound } from './usage-window.js';

/** A bound of the window: a time as every time input, else 400 `invalid_window` (CONTRACT.md "Usage"). */
const bound = (name: string) => timeInput().error(() => invalidBound(name));

const window = { since: bound('since'), until: bound('until') };

/**
 * `GET /v1/tenants/{id}/usage` query: only `since` and `until` (anything else is 400
 * `invalid_request`); the usage window checks the window they make.
 */
export const usageQuery = Joi.object(window);

export interface UsageQuery {
  since?: unknown;
  until?: unknown;
}

/** `GET /v1/tenant-usage` (CONTRACT.md §5 "Usage of every tenant"): the window, and a page of tenants. */
export const tenantUsageListQuery = Joi.object({ ...pageQuery, ...window });

export type TenantUsageListQuery = UsageQuery & PageParams;

export interface Amounts {
  calls: string;
  other: string;
  total: string;
}

/** CONTRACT.md "Usage". */
export interface TenantUsage {
  tenant_id: string;
  since: string;
  until: string;
  completed_calls: number;
  talk_time_seconds: number;
  currency: string;
  charges: Amounts;
  billable: Amounts;
}

/** A row of CONTRACT.md §5 "Usage of every tenant": the tenant, then exactly its usage. */
export interface TenantUsageRow extends TenantUsage {
  name: string;
  external_ref: string | null;
  disabled: boolean;
}

const amounts = () => Joi.object({ calls: amount(), other: amount(), total: amount().description('calls + other') });

/** The figures of a window, after the tenant's fields. */
const usageFields = {
  since: isoTime(),
  until: isoTime(),
  completed_calls: Joi.number().integer(),
  talk_time_seconds: Joi.number().integer(),
  currency: Joi.string(),
  charges: amounts().description(
    "What the reseller's balance was charged for the tenant's activity, at the reseller's rates: `calls` for calls, `other` for texts.",
  ),
  billable: amounts().description('What the tenant owes at its resale prices (those in force when each call ended): the same split and rounding as `charges`.'),
};

/** CONTRACT.md "Usage", with `billable` (§4 "Resale prices"). */
export const usageSchema = responseSchema('TenantUsage', { tenant_id: Joi.string(), ...usageFields });

/** A row of `GET /v1/tenant-usage`: the tenant, then exactly what `GET /v1/tenants/{id}/usage` answers for the window. */
export const tenantUsageRowSchema = responseSchema('TenantUsageRow', {
  tenant_id: Joi.string(),
  name: Joi.string(),
  external_ref: Joi.string().allow(null),
  disabled: Joi.boolean(),
  ...usageFields,
});
