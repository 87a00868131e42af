import type { Actor } from '../auth/actor.js';
import { retainedEvents } from '../history/history-partitions.js';
import { NotFoundError } from '../lib/errors.js';
import type { Page } from '../lib/pagination.js';
import { presentRow } from '../lib/sql.js';
import type { EventsRepository, EventView } from './events.repository.js';
import type { EventsQuery } from './events.schemas.js';

/**
 * The events feed (CONTRACT.md §4): a receiver that was down reads what it missed, without retries.
 * Reads are bounded to the retained days, so only their partitions; by id, one primary-key probe per day.
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
