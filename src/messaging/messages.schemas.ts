import Joi from 'joi';
import { amount, idReference, isoTime, responseSchema } from '../http/schemas.js';
import { pageQuery } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import { TEXT_FAILURE_REASONS, TEXT_STATUSES } from './message.entity.js';

export type MessagesQuery = PageParams & { call_id?: string };

/** `GET /v1/messages`, optionally only the text of one call. */
export const listMessagesQuery = Joi.object({ ...pageQuery, call_id: idReference() });

export const messageSchema = responseSchema('Message', {
  id: Joi.string(),
  call_id: Joi.string().allow(null),
  from: Joi.string(),
  to: Joi.string(),
  body: Joi.string().allow(''),
  charge: amount().description('What the paying organization was charged, in its currency ("0.000000" for a failed text).'),
  currency: Joi.string(),
  status: Joi.string()
    .valid(...TEXT_STATUSES)
    .description('`failed`: never sent, uncharged; `failure_reason` says why.'),
  failure_reason: Joi.string()
    .valid(...TEXT_FAILURE_REASONS)
    .allow(null)
    .description("Why a failed text was not sent: `spend_limit_reached`, its tenant's monthly spend limit was reached. Null when sent."),
  created_at: isoTime(),
});
