import Joi from 'joi';
import { CAPABILITIES } from '../auth/capabilities.js';
import { currency, idParams, money, nonNegativeMoney, rate, timezone } from '../http/schemas.js';
import { MAX_ADJUSTMENT_MICROS, MAX_BALANCE_MICROS } from '../lib/money.js';

const ceiling = Joi.object({
  max_concurrent_calls: Joi.number().integer().min(1).max(10_000),
  max_calls_per_hour: Joi.number().integer().min(1).max(1_000_000),
}).min(1);

const rates = Joi.object({
  per_minute: rate(),
  per_text: rate(),
}).min(1);

/** `POST /admin/v1/orgs` (CONTRACT.md §3). */
export const createOrgSchema = Joi.object({
  name: Joi.string().trim().min(1).max(200).required(),
  timezone: timezone().default('UTC'),
  reseller: Joi.boolean().default(false),
  tenant_limit: Joi.number().integer().min(0).max(100_000).default(10),
  ceiling,
  rates,
  balance: money(MAX_ADJUSTMENT_MICROS),
  currency: currency().default('USD'),
});

/** `PATCH /admin/v1/orgs/{id}`; `low_balance_threshold` (CONTRACT.md §4): an amount, or null to unset. */
export const updateOrgSchema = Joi.object({
  reseller: Joi.boolean(),
  tenant_limit: Joi.number().integer().min(0).max(100_000),
  ceiling,
  rates,
  low_balance_threshold: nonNegativeMoney(MAX_BALANCE_MICROS).allow(null),
}).min(1);

export const balanceAdjustmentSchema = Joi.object({ amount: money(MAX_ADJUSTMENT_MICROS).required() });

export const createMemberSchema = Joi.object({
  email: Joi.string().trim().lowercase().email().max(254).required(),
  capabilities: Joi.array()
    .items(Joi.string().valid(...CAPABILITIES))
    .unique()
    .required(),
  password: Joi.string().min(8).max(1024),
});

export const orgIdParams = idParams('organization');
