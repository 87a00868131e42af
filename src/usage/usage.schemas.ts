import Joi from 'joi';
import { amount, isoTime, responseSchema, timeInput } from '../http/schemas.js';
import { invalidBound } from './usage-window.js';

/** A bound of the window: a time as every time input, else 400 `invalid_window` (CONTRACT.md "Usage"). */
const bound = (name: string) => timeInput().error(() => invalidBound(name));

/**
 * `GET /v1/tenants/{id}/usage` query: only `since` and `until` (anything else is 400
 * `invalid_request`); the usage window checks the window they make.
 */
export const usageQuery = Joi.object({ since: bound('since'), until: bound('until') });

export interface UsageQuery {
  since?: unknown;
  until?: unknown;
}

const amounts = () => Joi.object({ calls: amount(), other: amount(), total: amount().description('calls + other') });

/** CONTRACT.md "Usage", with `billable` (§4 "Resale prices"). */
export const usageSchema = responseSchema('TenantUsage', {
  tenant_id: Joi.string(),
  since: isoTime(),
  until: isoTime(),
  completed_calls: Joi.number().integer(),
  talk_time_seconds: Joi.number().integer(),
  currency: Joi.string(),
  charges: amounts().description(
    "What the reseller's balance was charged for the tenant's activity, at the reseller's rates: `calls` for calls, `other` for texts.",
  ),
  billable: amounts().description('What the tenant owes at its resale prices (those in force when each call ended): the same split and rounding as `charges`.'),
});
