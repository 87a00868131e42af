import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { amount, e164, idParams, idReference, isoTime, responseSchema } from '../http/schemas.js';
import { CALL_STATUSES, END_REASONS, type SimulateScript } from './call.entity.js';

export const OUTCOMES = ['positive', 'neutral', 'negative', 'voicemail', 'unreachable'] as const;

/** The simulated carrier's script (CONTRACT.md "Calls"): answered, 5 s, `neutral` by default. */
export const simulateSchema = Joi.object<SimulateScript>({
  answer: Joi.alternatives().try(Joi.boolean(), Joi.string().valid('busy')).default(true),
  duration_seconds: Joi.number()
    .integer()
    .min(0)
    .max(4 * 3600)
    .default(5),
  outcome: Joi.string()
    .valid(...OUTCOMES)
    .default('neutral'),
}).default();

export const createCallSchema = Joi.object({
  agent_id: idReference().required(),
  contact_id: idReference().required(),
  campaign_id: idReference(),
  simulate: simulateSchema,
});

export const listCallsQuery = Joi.object({
  ...pageQuery,
  status: Joi.string().valid(...CALL_STATUSES),
  direction: Joi.string().valid('outbound', 'inbound'),
  campaign_id: idReference(),
});

export const callIdParams = idParams('call');

export const inboundCallSchema = Joi.object({
  to: e164().required(),
  from: e164().required(),
  simulate: simulateSchema,
});

export interface CreateCallInput {
  agent_id: string;
  contact_id: string;
  campaign_id?: string;
  simulate: SimulateScript;
}

/** A call, as every calls route answers it. */
export const callSchema = responseSchema('Call', {
  id: Joi.string(),
  org_id: Joi.string(),
  agent_id: Joi.string(),
  contact_id: Joi.string().allow(null),
  campaign_id: Joi.string().allow(null),
  direction: Joi.string().valid('outbound', 'inbound'),
  status: Joi.string().valid(...CALL_STATUSES),
  outcome: Joi.string()
    .valid(...OUTCOMES)
    .allow(null),
  end_reason: Joi.string()
    .valid(...END_REASONS)
    .allow(null),
  phone_number: Joi.string(),
  from: Joi.string().allow(null),
  to: Joi.string().allow(null),
  duration_seconds: Joi.number().integer().allow(null),
  charge: amount()
    .allow(null)
    .description("What the paying organization's balance was charged (a tenant's reseller's), at its `per_minute`; null until the call ends."),
  billable: amount()
    .allow(null)
    .description(
      "A tenant's call: what the tenant owes its reseller, at the resale `per_minute` in force when the call ended (same rounding as `charge`); null until the call ends, and always for a call of an organization that is no tenant.",
    ),
  currency: Joi.string(),
  started_at: isoTime().allow(null),
  ended_at: isoTime().allow(null),
  created_at: isoTime(),
});
