import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { e164, e164Filter, isoTime, responseSchema } from '../http/schemas.js';

/** Free-form data the organization keeps on a contact. */
const MAX_METADATA_KEYS = 50;

const fields = {
  name: Joi.string().trim().min(1).max(200),
  phone_number: e164(),
  email: Joi.string().trim().email().max(254).allow(null),
  metadata: Joi.object().unknown(true).max(MAX_METADATA_KEYS),
};

/** `POST /v1/contacts {name, phone_number, email?, metadata?}` (CONTRACT.md "Other areas"). */
export const createContactSchema = Joi.object({
  ...fields,
  name: fields.name.required(),
  phone_number: fields.phone_number.required(),
});

/** `PATCH /v1/contacts/{id}`: any field, at least one; `metadata` replaces the stored object. */
export const updateContactSchema = Joi.object(fields).min(1);

/** `GET /v1/contacts`, optionally only the contact with one phone number. */
export const listContactsQuery = Joi.object({ ...pageQuery, phone_number: e164Filter() });

/** A contact, as every contacts route answers it. */
export const contactSchema = responseSchema('Contact', {
  id: Joi.string(),
  name: Joi.string(),
  phone_number: Joi.string(),
  email: Joi.string().allow(null),
  metadata: Joi.object().unknown(true),
  created_at: isoTime(),
  updated_at: isoTime(),
});
