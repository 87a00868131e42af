import Joi from 'joi';
import { pageQuery } from '../http/pagination.js';
import { idParams, idReference, isoTime, responseSchema, timeInput } from '../http/schemas.js';
import type { PageParams } from '../lib/pagination.js';
import { EVENT_TYPES, type EventType } from './event-types.js';

/** A time filter of the feed, as a Date. */
const timeFilter = (what: string) => timeInput(what).custom((value: string) => new Date(value));

/** `GET /v1/events` (CONTRACT.md §4 "Events feed"): the list query and its filters. */
export const listEventsQuery = Joi.object({
  ...pageQuery,
  type: Joi.string().valid(...EVENT_TYPES),
  call_id: idReference(),
  created_after: timeFilter('only events created after this time'),
  created_before: timeFilter('only events created before this time'),
});

export interface EventFilters {
  type?: EventType;
  call_id?: string;
  created_after?: Date;
  created_before?: Date;
}

export type EventsQuery = PageParams & EventFilters;

export const eventIdParams = idParams('event');

/** `{id, type, created_at, data}`: `data` is the body a delivery of it carries before an endpoint's `field_aliases`/`extra_payload`. */
export const eventSchema = responseSchema('Event', {
  id: Joi.string(),
  type: Joi.string().valid(...EVENT_TYPES),
  created_at: isoTime(),
  data: Joi.object().unknown(true).description("the event's body, as delivered before an endpoint's customization"),
});
