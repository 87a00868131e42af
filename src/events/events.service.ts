import type { Actor } from '../auth/actor.js';
import { retainedEvents } from '../history/history-partitions.js';
import { NotFoundError } from '../lib/errors.js';
import type { Page } from '../lib/pagination.js';
import { presentRow } from '../lib/sql.js';
import type { EventsRepository, EventView } from './events.repository.js';
import type { EventsQuery } from './events.schemas.js';

/**
 * The events feed (CONTRACT.md §4): the acting organization's events, call events and
 * operational ones, newest first, for EVENT_RETENTION_DAYS. Inside a tenant, the tenant's; a
 * reseller's own feed holds its own events only (its tenants' calls are theirs). A receiver
 * that was down reads what it missed here, without any delivery being retried. Every read is
 * bounded to the retained days, so it reads only their partitions; an event by id alone is
 * looked for in each retained day, one primary-key probe per day.
 */
export class EventsService {
  constructor(private readonly events: EventsRepository) {}

  list(actor: Actor, query: EventsQuery): Promise<Page<EventView>> {
    return this.events.list(actor.org.id, retainedEvents(), query);
  }

  async get(actor: Actor, id: string): Promise<EventView> {
    const row = await this.events.find(actor.org.id, id, retainedEvents());
    if (!row) throw new NotFoundError('event');
    return presentRow(row);
  }
}
