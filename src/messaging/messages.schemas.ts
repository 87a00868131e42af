import Joi from 'joi';
import { amount, idReference, isoTime, responseSchema } from '../http/schemas.js';
import { pageQuery } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';

export type MessagesQuery = PageParams & { call_id?: string };

/** `GET /v1/messages`, optionally only the text of one call. */
export const listMessagesQuery = Joi.object({ ...pageQuery, call_id: idReference() });

export const messageSchema = responseSchema('Message', {
  id: Joi.string(),
  call_id: Joi.string().allow(null),
  from: Joi.string(),
  to: Joi.string(),
  body: Joi.string().allow(''),
  charge: amount().description('What the paying organization was charged, in its currency.'),
  currency: Joi.string(),
  created_at: isoTime(),
});
