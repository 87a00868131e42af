import Joi from 'joi';
import { isoTime, responseSchema } from '../http/schemas.js';
import { pageQuery } from '../http/pagination.js';

const fields = {
  name: Joi.string().trim().min(1).max(200),
  address: Joi.string().trim().allow('').max(1_000),
};

/** `POST /v1/locations {name, address?}`. */
export const createLocationSchema = Joi.object({ ...fields, name: fields.name.required() });

/** `PATCH /v1/locations/{id}`: any field, at least one. */
export const updateLocationSchema = Joi.object(fields).min(1);

export const listLocationsQuery = Joi.object(pageQuery);

/** A location, as every locations route answers it. */
export const locationSchema = responseSchema('Location', {
  id: Joi.string(),
  name: Joi.string(),
  address: Joi.string().allow(''),
  is_main: Joi.boolean(),
  created_at: isoTime(),
  updated_at: isoTime(),
});
