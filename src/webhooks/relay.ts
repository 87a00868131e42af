import type { DataSource } from 'typeorm';
import { rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import { newId } from '../lib/ids.js';

/** Events relayed in one transaction at most; a full batch means more are waiting. */
export const RELAY_BATCH = 500;

/** The channel a relay batch that made deliveries notifies (the webhooks workers LISTEN on it). */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/** Postgres refuses NOTIFY payloads of 8,000 bytes and more. */
const MAX_PAYLOAD = 7_000;

/** How often the relay looks through all of `call_events` for the oldest event not relayed. */
const OUTBOX_RANGE_MS = 10_000;

/**
 * An event's `created_at` is its transaction's start, and it may commit a while later: the
 * outbox range starts this far back, so that one committing late is still seen at once.
 */
const LATE_COMMIT_MS = 5 * 60_000;

/**
 * A notification's payload: the endpoints that have new deliveries, comma-separated, so a
 * worker whose lanes for them are full need not look; `*` (look) when they are too many to list.
 */
export function notifyPayload(endpointIds: string[]): string {
  const listed = [...new Set(endpointIds)].join(',');
  return listed.length > MAX_PAYLOAD ? '*' : listed;
}

/**
 * Where events not relayed yet can be: from the oldest of them (or a few minutes back) to now.
 * This one statement reads every partition of `call_events` (each one's index of unrelayed
 * events: a probe), so that the relay's own statements read only the days in the range.
 */
async function outboxRange(dataSource: DataSource): Promise<HistoryRange> {
  const [{ oldest, now }] = await dataSource.query(`SELECT min(created_at) AS oldest, now() FROM call_events WHERE relayed_at IS NULL`);
  const lateCommits = new Date(now.getTime() - LATE_COMMIT_MS);
  return rangeFrom(oldest && oldest < lateCommits ? oldest : lateCommits);
}

/**
 * Moves new call events from the outbox to deliveries: one per event and matching endpoint of
 * the event's organization (an endpoint with `outcomes` gets only events whose outcome is
 * listed; events without an outcome yet match no such endpoint). The fan-out and the event's
 * `relayed_at` commit together, and (event, endpoint) is unique, so a relay that crashes and
 * restarts never delivers an event twice to one endpoint. A delivery takes its event's
 * `created_at` (the partition key of both): the unique index on (event, endpoint, created_at)
 * is one on (event, endpoint), since an event has one `created_at`. New deliveries are due at
 * once: the webhooks workers claim them from Postgres, woken by a NOTIFY on
 * `webhook_deliveries` sent when the batch commits (and by their own polling when a
 * notification is missed). Only events in `range` are looked at (see `Relay`).
 * Returns how many events it relayed (a full batch means: call again at once).
 */
async function relayBatch(dataSource: DataSource, range: HistoryRange): Promise<number> {
  const { events } = await dataSource.transaction(async (em) => {
    const events: Array<{ id: string; created_at: Date }> = await em.query(
      `SELECT id, created_at FROM call_events WHERE relayed_at IS NULL AND created_at >= $1 AND created_at <= $2
        ORDER BY created_at, sequence LIMIT ${RELAY_BATCH} FOR UPDATE SKIP LOCKED`,
      [range.from, range.to],
    );
    if (events.length === 0) return { events };
    const ids = events.map((e) => e.id);
    const batch = spanning(events.map((e) => e.created_at));
    const matches: Array<{ event_id: string; endpoint_id: string }> = await em.query(
      `SELECT ev.id AS event_id, w.id AS endpoint_id
         FROM call_events ev JOIN webhook_endpoints w ON w.org_id = ev.org_id AND NOT w.disabled
        WHERE ev.id = ANY($1) AND ev.created_at >= $2 AND ev.created_at <= $3
          AND (cardinality(w.outcomes) = 0 OR (ev.payload->>'outcome') = ANY(w.outcomes))
        ORDER BY ev.created_at, ev.sequence`,
      [ids, batch.from, batch.to],
    );
    if (matches.length) {
      await em.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
         SELECT m.id, ev.org_id, m.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence, 'pending', 0, now(), ev.created_at
           FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS m(id, event_id, endpoint_id)
           JOIN call_events ev ON ev.id = m.event_id AND ev.created_at >= $4 AND ev.created_at <= $5
         ON CONFLICT (event_id, endpoint_id, created_at) DO NOTHING`,
        [matches.map(() => newId('dlv')), matches.map((m) => m.event_id), matches.map((m) => m.endpoint_id), batch.from, batch.to],
      );
      await em.query(`SELECT pg_notify($1, $2)`, [DELIVERIES_CHANNEL, notifyPayload(matches.map((m) => m.endpoint_id))]);
    }
    await em.query(`UPDATE call_events SET relayed_at = now() WHERE id = ANY($1) AND created_at >= $2 AND created_at <= $3`, [ids, batch.from, batch.to]);
    return { events };
  });
  return events.length;
}

/**
 * The relay's loop body: relays a batch from the outbox range, which it looks up again every
 * few seconds. An event older than the range (its transaction began before it and committed
 * after) waits for the next look, seconds at most.
 */
export class Relay {
  private range: HistoryRange | null = null;
  private rangeAt = 0;

  constructor(private readonly dataSource: DataSource) {}

  /** Relays one batch; returns how many events (a full batch means: call again at once). */
  async batch(): Promise<number> {
    if (!this.range || Date.now() - this.rangeAt >= OUTBOX_RANGE_MS) {
      this.range = await outboxRange(this.dataSource);
      this.rangeAt = Date.now();
    }
    return relayBatch(this.dataSource, this.range);
  }
}
