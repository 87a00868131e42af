import Joi from 'joi';
import { isoTime, responseSchema } from '../http/schemas.js';
import { pageQuery } from '../http/pagination.js';

const fields = {
  name: Joi.string().trim().min(1).max(200),
  description: Joi.string().trim().allow('').max(2_000),
  duration_minutes: Joi.number().integer().strict().min(5).max(600),
};

/** `POST /v1/services {name, description?, duration_minutes?}`; a service lasts 30 minutes unless told. */
export const createServiceSchema = Joi.object({
  ...fields,
  name: fields.name.required(),
  duration_minutes: fields.duration_minutes.default(30),
});

/** `PATCH /v1/services/{id}`: any field, at least one. */
export const updateServiceSchema = Joi.object(fields).min(1);

export const listServicesQuery = Joi.object(pageQuery);

/** A service, as every services route answers it. */
export const serviceSchema = responseSchema('Service', {
  id: Joi.string(),
  name: Joi.string(),
  description: Joi.string().allow(''),
  duration_minutes: Joi.number().integer(),
  created_at: isoTime(),
  updated_at: isoTime(),
});
