import type { DataSource } from 'typeorm';
import { newId } from '../lib/ids.js';

/** Events relayed in one transaction at most; a full batch means more are waiting. */
export const RELAY_BATCH = 500;

/** The channel a relay batch that made deliveries notifies (the webhooks workers LISTEN on it). */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/** Postgres refuses NOTIFY payloads of 8,000 bytes and more. */
const MAX_PAYLOAD = 7_000;

/**
 * A notification's payload: the endpoints that have new deliveries, comma-separated, so a
 * worker whose lanes for them are full need not look; `*` (look) when they are too many to list.
 */
export function notifyPayload(endpointIds: string[]): string {
  const listed = [...new Set(endpointIds)].join(',');
  return listed.length > MAX_PAYLOAD ? '*' : listed;
}

/**
 * Moves new call events from the outbox to deliveries: one per event and matching endpoint of
 * the event's organization (an endpoint with `outcomes` gets only events whose outcome is
 * listed; events without an outcome yet match no such endpoint). The fan-out and the event's
 * `relayed_at` commit together, and (event, endpoint) is unique, so a relay that crashes and
 * restarts never delivers an event twice to one endpoint. New deliveries are due at once: the
 * webhooks workers claim them from Postgres, woken by a NOTIFY on `webhook_deliveries` sent
 * when the batch commits (and by their own polling when a notification is missed).
 * Returns how many events it relayed (a full batch means: call again at once).
 */
export async function relayBatch(dataSource: DataSource): Promise<number> {
  const { events } = await dataSource.transaction(async (em) => {
    const events: Array<{ id: string }> = await em.query(
      `SELECT id FROM call_events WHERE relayed_at IS NULL ORDER BY created_at, sequence LIMIT ${RELAY_BATCH} FOR UPDATE SKIP LOCKED`,
    );
    if (events.length === 0) return { events };
    const ids = events.map((e) => e.id);
    const matches: Array<{ event_id: string; endpoint_id: string }> = await em.query(
      `SELECT ev.id AS event_id, w.id AS endpoint_id
         FROM call_events ev JOIN webhook_endpoints w ON w.org_id = ev.org_id AND NOT w.disabled
        WHERE ev.id = ANY($1) AND (cardinality(w.outcomes) = 0 OR (ev.payload->>'outcome') = ANY(w.outcomes))
        ORDER BY ev.created_at, ev.sequence`,
      [ids],
    );
    if (matches.length) {
      await em.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at)
         SELECT m.id, ev.org_id, m.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence, 'pending', 0, now()
           FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS m(id, event_id, endpoint_id)
           JOIN call_events ev ON ev.id = m.event_id
         ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
        [matches.map(() => newId('dlv')), matches.map((m) => m.event_id), matches.map((m) => m.endpoint_id)],
      );
      await em.query(`SELECT pg_notify($1, $2)`, [DELIVERIES_CHANNEL, notifyPayload(matches.map((m) => m.endpoint_id))]);
    }
    await em.query(`UPDATE call_events SET relayed_at = now() WHERE id = ANY($1)`, [ids]);
    return { events };
  });
  return events.length;
}
