import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams, idReference, isoTime, responseSchema, timeInput } from '../http/schemas.js';
import type { PageParams } from '../lib/pagination.js';
import { EVENT_TYPES, type EventType } from './event-types.js';

/** A time filter of the feed, as a Date. */
const timeFilter = (what: string) => timeInput(what).custom((value: string) => new Date(value));

/**
 * `GET /v1/events` (CONTRACT.md §4 "Events feed"): the list query and its filters; a reseller's
 * `include_tenants` and `tenant_id` (§5 "Events feed across tenants") choose whose events.
 */
export const listEventsQuery = Joi.object({
  ...pageQuery,
  type: Joi.string().valid(...EVENT_TYPES),
  call_id: idReference(),
  created_after: timeFilter('only events created after this time'),
  created_before: timeFilter('only events created before this time'),
  include_tenants: Joi.boolean().sensitive().description("`true`: a reseller's own events and all its tenants' (a reseller acting as itself only)."),
  tenant_id: idReference().description("only this tenant's events (one of the reseller's tenants; a reseller acting as itself only)."),
});

export interface EventFilters {
  type?: EventType;
  call_id?: string;
  created_after?: Date;
  created_before?: Date;
}

/** Whose events a reseller's list reads (CONTRACT.md §5): its own (neither), all its tenants' too, or one tenant's. */
export interface EventsScopeQuery {
  include_tenants?: boolean;
  tenant_id?: string;
}

export type EventsQuery = PageParams & EventFilters & EventsScopeQuery;

export const eventIdParams = idParams('event');

/** `{id, type, created_at, tenant_id, data}`: `data` is the body a delivery of it carries before an endpoint's `field_aliases`/`extra_payload`. */
export const eventSchema = responseSchema('Event', {
  id: Joi.string(),
  type: Joi.string().valid(...EVENT_TYPES),
  created_at: isoTime(),
  tenant_id: Joi.string()
    .allow(null)
    .description(
      "the tenant whose event it is; null for an event of an organization that is not a tenant (the same inside the tenant and in its reseller's feed)",
    ),
  data: Joi.object().unknown(true).description("the event's body, as delivered before an endpoint's customization"),
});
