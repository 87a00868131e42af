import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams, isoTime, responseSchema } from '../http/schemas.js';
import { CAPABILITIES } from './capabilities.js';

export const createApiKeySchema = Joi.object({
  label: Joi.string().trim().min(1).max(200).required(),
  permissions: Joi.array()
    .items(Joi.string().valid(...CAPABILITIES))
    .unique()
    .required(),
});

export const listApiKeysQuery = Joi.object(pageQuery);

export const keyIdParams = idParams('api_key', 'key_id');

const apiKeyFields = {
  key_id: Joi.string(),
  label: Joi.string(),
  permissions: Joi.array().items(Joi.string().valid(...CAPABILITIES)),
  prefix: Joi.string(),
  created_at: isoTime(),
  last_used_at: isoTime().allow(null),
};

/** CONTRACT.md "API key": never the raw key, except once on creation (`newApiKeySchema`). */
export const apiKeySchema = responseSchema('ApiKey', apiKeyFields);

/** `POST /v1/api-keys`: the key with its raw value, the only time it appears. */
export const newApiKeySchema = responseSchema('NewApiKey', { ...apiKeyFields, key: Joi.string() });
