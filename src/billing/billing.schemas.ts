import Joi from 'joi';
import { amount, isoTime, responseSchema } from '../http/schemas.js';
import { pageOf, pageQuery } from '../http/pagination.js';

/** The lists of the billing area take only `limit` and `cursor`. */
export const billingListQuery = Joi.object(pageQuery);

export const balanceSchema = responseSchema('Balance', { balance: amount(), currency: Joi.string() });

export const paymentSchema = responseSchema('Payment', {
  id: Joi.string(),
  amount: amount(),
  currency: Joi.string(),
  description: Joi.string().allow(''),
  created_at: isoTime(),
});

export const receiptSchema = responseSchema('Receipt', {
  id: Joi.string(),
  number: Joi.string(),
  amount: amount(),
  currency: Joi.string(),
  issued_at: isoTime(),
});

export const planSchema = responseSchema('Plan', {
  id: Joi.string(),
  name: Joi.string(),
  description: Joi.string(),
  rates: Joi.object({ per_minute: amount(), per_text: amount() }),
  currency: Joi.string(),
  current: Joi.boolean().description('Whether the organization is on this plan.'),
});

export const addOnSchema = responseSchema('AddOn', { id: Joi.string(), name: Joi.string(), description: Joi.string() });

/** There is no referral program yet: the list is always empty. */
export const referralsSchema = pageOf(Joi.any().forbidden());
