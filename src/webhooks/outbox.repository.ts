import type { DataSource, EntityManager } from 'typeorm';
import { CALL_EVENT_TYPES } from '../events/event-types.js';
import { eventTenantIdSql } from '../events/events.repository.js';
import { inRange, type HistoryRange } from '../history/history-range.js';
import { newId } from '../lib/ids.js';

/** An event, an endpoint it goes to, and the endpoint's organization. */
export interface EndpointMatch {
  event_id: string;
  endpoint_id: string;
  org_id: string;
}

/** An event the relay took, with its call's trace (null: tracing was off, or not a call's event). */
export interface UnrelayedEvent {
  id: string;
  created_at: Date;
  event: string;
  trace_parent: string | null;
}

/**
 * The relay's statements: the outbox, `call_events` (call events, written by the engine in the
 * statement that changes their call, and operational events, each written with its change), read
 * for events not relayed yet, matched to endpoints, fanned out to deliveries and marked relayed.
 */
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The oldest event not relayed yet (null: none), and the database's now. This one statement
   * reads every partition of `call_events` (each one's index of unrelayed events: a probe).
   */
  async oldestUnrelayed(): Promise<{ oldest: Date | null; now: Date }> {
    const [{ oldest, now }] = await this.dataSource.query<Array<{ oldest: Date | null; now: Date }>>(
      `SELECT min(created_at) AS oldest, now() FROM call_events WHERE relayed_at IS NULL`,
    );
    return { oldest, now };
  }

  /**
   * Whether a relay waits for a NOTIFY (`relay_wakeup`): while none does, event writers send none,
   * so their commits do not queue for Postgres's notification lock (see the RelayWakeup migration).
   */
  async setRelayAsleep(asleep: boolean): Promise<void> {
    await this.dataSource.query('UPDATE relay_wakeup SET asleep = $1', [asleep]);
  }

  /** Takes (FOR UPDATE, skipping those others hold) up to `limit` events in `range` not relayed yet, oldest first. */
  lockUnrelayed(em: EntityManager, range: HistoryRange, limit: number): Promise<UnrelayedEvent[]> {
    return em.query(
      `SELECT id, created_at, event, trace_parent FROM call_events WHERE relayed_at IS NULL AND ${inRange('created_at', '$1', '$2')}
        ORDER BY created_at, sequence LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
      [range.from, range.to],
    );
  }

  /**
   * Each event of `eventIds` (in `batch`) with each matching endpoint, and the endpoint's
   * organization (whose delivery it is), in one statement for the whole batch. An event matches
   * the enabled endpoints of its organization and, for a tenant's event (its account differs from
   * its organization), those of its reseller with `tenant_events` 'all' whose `tenant_ids` is
   * empty or lists the tenant, while the reseller still is one (CONTRACT.md §5). Then both
   * filters must match (CONTRACT.md §4 "Event types and endpoint filters"):
   * - `event_types` lists the event, or is empty and the event is a call event (an operational
   *   event goes only to the endpoints that list it);
   * - for a call event, `outcomes` is empty or lists the event's outcome (an event without an
   *   outcome yet matches no endpoint with `outcomes`); operational events have no outcome, and
   *   `outcomes` does not apply to them.
   */
  matchingEndpoints(em: EntityManager, eventIds: string[], batch: HistoryRange): Promise<EndpointMatch[]> {
    return em.query(
      `SELECT ev.id AS event_id, w.id AS endpoint_id, w.org_id
         FROM call_events ev JOIN webhook_endpoints w ON w.org_id IN (ev.org_id, ev.account_id) AND NOT w.disabled
        WHERE ev.id = ANY($1) AND ${inRange('ev.created_at', '$2', '$3')}
          AND (w.org_id = ev.org_id
               OR (w.tenant_events = 'all' AND (cardinality(w.tenant_ids) = 0 OR ev.org_id = ANY(w.tenant_ids))
                   AND EXISTS (SELECT 1 FROM organizations r WHERE r.id = w.org_id AND r.is_reseller)))
          AND (ev.event = ANY(w.event_types) OR (cardinality(w.event_types) = 0 AND ev.event = ANY($4::text[])))
          AND (ev.event <> ALL($4::text[]) OR cardinality(w.outcomes) = 0 OR (ev.payload->>'outcome') = ANY(w.outcomes))
        ORDER BY ev.created_at, ev.sequence`,
      [eventIds, batch.from, batch.to, CALL_EVENT_TYPES],
    );
  }

  /**
   * One delivery per (event, endpoint) of `matches`, due at once, each with its event's
   * `created_at` (the partition key of both; `batch` spans them), belonging to the endpoint's
   * organization and naming the event's tenant: (event, endpoint, created_at) is unique, so an
   * event relayed again makes no second delivery.
   */
  async fanOut(em: EntityManager, matches: EndpointMatch[], batch: HistoryRange): Promise<void> {
    await em.query(
      `INSERT INTO webhook_deliveries (id, org_id, tenant_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
       SELECT m.id, m.org_id, ${eventTenantIdSql('ev')}, m.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence, 'pending', 0, now(), ev.created_at
         FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[]) AS m(id, event_id, endpoint_id, org_id)
         JOIN call_events ev ON ev.id = m.event_id AND ${inRange('ev.created_at', '$5', '$6')}
       ON CONFLICT (event_id, endpoint_id, created_at) DO NOTHING`,
      [matches.map(() => newId('dlv')), matches.map((m) => m.event_id), matches.map((m) => m.endpoint_id), matches.map((m) => m.org_id), batch.from, batch.to],
    );
  }

  /** Marks the events of `eventIds` (in `batch`) relayed. */
  async markRelayed(em: EntityManager, eventIds: string[], batch: HistoryRange): Promise<void> {
    await em.query(`UPDATE call_events SET relayed_at = now() WHERE id = ANY($1) AND ${inRange('created_at', '$2', '$3')}`, [eventIds, batch.from, batch.to]);
  }
}
