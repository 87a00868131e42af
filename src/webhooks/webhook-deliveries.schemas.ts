import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams } from '../http/schemas.js';

export const listDeliveriesQuery = Joi.object({
  ...pageQuery,
  endpoint_id: Joi.string().max(40),
  status: Joi.string().valid('pending', 'retrying', 'succeeded', 'failed'),
  call_id: Joi.string().max(40),
  event: Joi.string().valid('call.queued', 'call.ringing', 'call.in_progress', 'call.completed'),
});

export const deliveryIdParams = idParams('webhook_delivery');
export const endpointIdParams = idParams('webhook_endpoint');

export const recoverSchema = Joi.object({
  since: Joi.string()
    .isoDate()
    .pattern(/Z$/)
    .required()
    .messages({ 'string.pattern.base': '{{#label}} must be an ISO 8601 UTC time ending in Z' }),
});

export interface DeliveryFilters {
  endpoint_id?: string;
  status?: string;
  call_id?: string;
  event?: string;
}
