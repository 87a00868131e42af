import Joi from 'joi';
import { e164 } from '../http/schemas.js';

/**
 * `PUT /v1/sms-sender {phone_number}`: one of the organization's own numbers, or null for none.
 * Also the shape `GET` and `PUT` answer.
 */
export const smsSenderSchema = Joi.object({ phone_number: e164().allow(null).required() });
