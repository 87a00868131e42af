import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams, idReference, isoTime, responseSchema } from '../http/schemas.js';
import { CAPABILITIES, type Capability } from './capabilities.js';

/** CONTRACT.md §5: a key restricted to 1 to 100 of the reseller's tenants. */
const MAX_KEY_TENANTS = 100;

export interface CreateApiKeyInput {
  label: string;
  permissions: Capability[];
  tenant_ids?: string[] | null;
}

export const createApiKeySchema = Joi.object({
  label: Joi.string().trim().min(1).max(200).required(),
  permissions: Joi.array()
    .items(Joi.string().valid(...CAPABILITIES))
    .unique()
    .required(),
  tenant_ids: Joi.array()
    .items(idReference())
    .min(1)
    .max(MAX_KEY_TENANTS)
    .unique()
    .allow(null)
    .description(
      `Restricts the key to these tenants of the reseller (1 to ${MAX_KEY_TENANTS}): it then works only with \`X-Tenant-Id\` naming one of them, and never holds \`api_keys\`. Absent or null: a key of the whole account.`,
    ),
});

export const listApiKeysQuery = Joi.object(pageQuery);

export const keyIdParams = idParams('api_key', 'key_id');

const apiKeyFields = {
  key_id: Joi.string(),
  label: Joi.string(),
  permissions: Joi.array().items(Joi.string().valid(...CAPABILITIES)),
  tenant_ids: Joi.array().items(Joi.string()).allow(null).description('The only tenants the key works in; null for a key of the whole account.'),
  prefix: Joi.string(),
  created_at: isoTime(),
  last_used_at: isoTime().allow(null),
};

/** CONTRACT.md "API key": never the raw key, except once on creation (`newApiKeySchema`). */
export const apiKeySchema = responseSchema('ApiKey', apiKeyFields);

/** `POST /v1/api-keys`: the key with its raw value, the only time it appears. */
export const newApiKeySchema = responseSchema('NewApiKey', { ...apiKeyFields, key: Joi.string() });
