import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams } from '../http/schemas.js';
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
