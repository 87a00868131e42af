import Joi from 'joi';

/**
 * `GET /v1/tenants/{id}/usage` query: only `since` and `until` (anything else is 400
 * `invalid_request`). Their format is checked by the usage window (400 `invalid_window`).
 */
export const usageQuery = Joi.object({ since: Joi.any(), until: Joi.any() });

export interface UsageQuery {
  since?: unknown;
  until?: unknown;
}
