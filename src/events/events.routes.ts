import type { ApiRouter } from '../http/endpoint.js';
import { pageOf } from '../http/pagination.js';
import { eventIdParams, eventSchema, listEventsQuery, type EventsQuery } from './events.schemas.js';
import type { EventsService } from './events.service.js';

/** CONTRACT.md §4 "Events feed" and §5 "Events feed across tenants": reads, no capability; usable inside a tenant. */
export function eventRoutes(api: ApiRouter, events: EventsService): void {
  api
    .get<EventsQuery>('/events', {
      summary: "List events (call and operational), newest first; a reseller's tenants' too with include_tenants or tenant_id",
      query: listEventsQuery,
      response: pageOf(eventSchema),
      handler: ({ actor, query }) => events.list(actor, query),
    })
    .get<unknown, { id: string }>('/events/:id', {
      summary: 'Read an event',
      params: eventIdParams,
      response: eventSchema,
      handler: ({ actor, params }) => events.get(actor, params.id),
    });
}
