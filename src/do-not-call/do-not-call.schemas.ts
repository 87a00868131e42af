import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { e164, e164Filter, idParams, isoTime, responseSchema } from '../http/schemas.js';

/** `POST /v1/do-not-call {"phone_number": "+E164", "reason"?: string}` (CONTRACT.md §4). */
export const createDoNotCallSchema = Joi.object({
  phone_number: e164().required(),
  reason: Joi.string().trim().min(1).max(500).allow(null),
});

export interface CreateDoNotCallInput {
  phone_number: string;
  reason?: string | null;
}

/** `GET /v1/do-not-call`, optionally only the entry of one phone number. */
export const listDoNotCallQuery = Joi.object({ ...pageQuery, phone_number: e164Filter() });

/** An unknown entry id is 404 `do_not_call_entry_not_found`. */
export const doNotCallIdParams = idParams('do_not_call_entry');

/** An entry of the list, as every do-not-call route answers it. */
export const doNotCallEntrySchema = responseSchema('DoNotCallEntry', {
  id: Joi.string(),
  phone_number: Joi.string(),
  reason: Joi.string().allow(null),
  created_at: isoTime(),
});
