import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { e164, idReference, isoTime, responseSchema } from '../http/schemas.js';

export interface ProvisionNumberInput {
  area_code?: string;
  phone_number?: string;
  agent_id?: string | null;
}

export interface UpdateNumberInput {
  agent_id: string | null;
}

const agentId = idReference().allow(null);

/**
 * `POST /v1/phone-numbers {area_code?, phone_number?, agent_id?}`: a number near an area
 * code, or exactly the one asked for (not both), or any number when neither is given.
 */
export const provisionNumberSchema = Joi.object({
  area_code: Joi.string()
    .pattern(/^\d{3}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be 3 digits, such as "415"' }),
  phone_number: e164(),
  agent_id: agentId,
}).oxor('area_code', 'phone_number');

/** `PATCH /v1/phone-numbers/{id} {agent_id}`: the agent answering the number, or null for none. */
export const updateNumberSchema = Joi.object({ agent_id: agentId.required() });

export const listNumbersQuery = Joi.object(pageQuery);

/** A phone number, as every phone-numbers route answers it. */
export const phoneNumberSchema = responseSchema('PhoneNumber', {
  id: Joi.string(),
  phone_number: Joi.string(),
  agent_id: Joi.string().allow(null),
  created_at: isoTime(),
  updated_at: isoTime(),
});
