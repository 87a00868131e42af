import Joi from 'joi';
import { responseSchema } from '../http/schemas.js';

/** The carrier providers the service can connect to; the built-in simulator is the one today. */
export const CARRIER_PROVIDERS = ['simulator'] as const;

export type CarrierProvider = (typeof CARRIER_PROVIDERS)[number];

/** `PUT /v1/carrier {provider}`. */
export const carrierSchema = Joi.object({
  provider: Joi.string()
    .valid(...CARRIER_PROVIDERS)
    .required(),
});

/** The carrier connection, as `GET` and `PUT /v1/carrier` answer it. */
export const carrierConnectionSchema = responseSchema('CarrierConnection', { provider: Joi.string().valid(...CARRIER_PROVIDERS) });
