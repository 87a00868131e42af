import type { DataSource, EntityManager } from 'typeorm';
import { CALL_EVENT_TYPES } from '../events/event-types.js';
import { inRange, type HistoryRange } from '../history/history-range.js';
import { newId } from '../lib/ids.js';

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
  lockUnrelayed(em: EntityManager, range: HistoryRange, limit: number): Promise<Array<{ id: string; created_at: Date }>> {
    return em.query(
      `SELECT id, created_at FROM call_events WHERE relayed_at IS NULL AND ${inRange('created_at', '$1', '$2')}
        ORDER BY created_at, sequence LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
      [range.from, range.to],
    );
  }

  /**
   * Each event of `eventIds` (in `batch`) with each matching endpoint of its organization
   * (CONTRACT.md §4 "Event types and endpoint filters"), an enabled one where both filters match:
   * - `event_types` lists the event, or is empty and the event is a call event (an operational
   *   event goes only to the endpoints that list it);
   * - for a call event, `outcomes` is empty or lists the event's outcome (an event without an
   *   outcome yet matches no endpoint with `outcomes`); operational events have no outcome, and
   *   `outcomes` does not apply to them.
   */
  matchingEndpoints(em: EntityManager, eventIds: string[], batch: HistoryRange): Promise<Array<{ event_id: string; endpoint_id: string }>> {
    return em.query(
      `SELECT ev.id AS event_id, w.id AS endpoint_id
         FROM call_events ev JOIN webhook_endpoints w ON w.org_id = ev.org_id AND NOT w.disabled
        WHERE ev.id = ANY($1) AND ${inRange('ev.created_at', '$2', '$3')}
          AND (ev.event = ANY(w.event_types) OR (cardinality(w.event_types) = 0 AND ev.event = ANY($4::text[])))
          AND (ev.event <> ALL($4::text[]) OR cardinality(w.outcomes) = 0 OR (ev.payload->>'outcome') = ANY(w.outcomes))
        ORDER BY ev.created_at, ev.sequence`,
      [eventIds, batch.from, batch.to, CALL_EVENT_TYPES],
    );
  }

  /**
   * One delivery per (event, endpoint) of `matches`, due at once, each with its event's
   * `created_at` (the partition key of both; `batch` spans them): (event, endpoint, created_at)
   * is unique, so an event relayed again makes no second delivery.
   */
  async fanOut(em: EntityManager, matches: Array<{ event_id: string; endpoint_id: string }>, batch: HistoryRange): Promise<void> {
    await em.query(
      `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
       SELECT m.id, ev.org_id, m.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence, 'pending', 0, now(), ev.created_at
         FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS m(id, event_id, endpoint_id)
         JOIN call_events ev ON ev.id = m.event_id AND ${inRange('ev.created_at', '$4', '$5')}
       ON CONFLICT (event_id, endpoint_id, created_at) DO NOTHING`,
      [matches.map(() => newId('dlv')), matches.map((m) => m.event_id), matches.map((m) => m.endpoint_id), batch.from, batch.to],
    );
  }

  /** Marks the events of `eventIds` (in `batch`) relayed. */
  async markRelayed(em: EntityManager, eventIds: string[], batch: HistoryRange): Promise<void> {
    await em.query(`UPDATE call_events SET relayed_at = now() WHERE id = ANY($1) AND ${inRange('created_at', '$2', '$3')}`, [eventIds, batch.from, batch.to]);
  }
}
