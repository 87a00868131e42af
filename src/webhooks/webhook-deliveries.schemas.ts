import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { idParams, idReference, isoTime, responseSchema, timeInput } from '../http/schemas.js';

export const listDeliveriesQuery = Joi.object({
  ...pageQuery,
  endpoint_id: idReference(),
  status: Joi.string().valid('pending', 'retrying', 'succeeded', 'failed'),
  call_id: idReference(),
  event: Joi.string().valid(...EVENT_TYPES),
  /** CONTRACT.md §5: a reseller's deliveries of one tenant's events. */
  tenant_id: idReference().description("Only the deliveries of this tenant's events (a reseller acting as itself; one of its tenants)."),
});

export const deliveryIdParams = idParams('webhook_delivery');
export const endpointIdParams = idParams('webhook_endpoint');

export const recoverSchema = Joi.object({ since: timeInput('re-send every failed delivery of the endpoint created since this time').required() });

export interface DeliveryFilters {
  endpoint_id?: string;
  status?: string;
  call_id?: string;
  event?: string;
  tenant_id?: string;
}

/** CONTRACT.md "Webhook delivery", with its attempts, oldest first. */
export const deliverySchema = responseSchema('WebhookDelivery', {
  id: Joi.string(),
  endpoint_id: Joi.string(),
  event_id: Joi.string(),
  event: Joi.string().valid(...EVENT_TYPES),
  /** Null for an operational event (it has no call). */
  call_id: Joi.string().allow(null),
  /** CONTRACT.md §5: the tenant whose event it is; null for an event of an organization that is not a tenant. */
  tenant_id: Joi.string().allow(null),
  sequence: Joi.number().integer().allow(null),
  status: Joi.string().valid('pending', 'retrying', 'succeeded', 'failed'),
  attempt_count: Joi.number().integer(),
  next_attempt_at: isoTime().allow(null),
  last_response_status: Joi.number().integer().allow(null),
  created_at: isoTime(),
  attempts: Joi.array().items(
    Joi.object({
      delivery_id: Joi.string(),
      attempted_at: isoTime(),
      response_status: Joi.number().integer().allow(null),
      duration_ms: Joi.number().integer(),
      error: Joi.string().allow(null),
    }),
  ),
});

/** `POST /v1/webhook-endpoints/{id}/recover`: accepted; the deliveries are sent in the background. */
export const recoverySchema = responseSchema('WebhookRecovery', { endpoint_id: Joi.string(), since: isoTime(), status: Joi.string().valid('accepted') });
