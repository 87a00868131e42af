import type { DataSource } from 'typeorm';
import { rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import type { OutboxRepository } from './outbox.repository.js';
import type { DeliveryLogRepository } from './webhook-delivery.repository.js';

/** Events relayed in one transaction at most; a full batch means more are waiting. */
export const RELAY_BATCH = 500;

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
 * The relay's loop body: relays a batch from the outbox range, which it looks up again every
 * few seconds. An event older than the range (its transaction began before it and committed
 * after) waits for the next look, seconds at most.
 */
export class Relay {
  private range: HistoryRange | null = null;
  private rangeAt = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxRepository,
    private readonly deliveries: DeliveryLogRepository,
  ) {}

  /** Relays one batch; returns how many events (a full batch means: call again at once). */
  async batch(): Promise<number> {
    if (!this.range || Date.now() - this.rangeAt >= OUTBOX_RANGE_MS) {
      this.range = await this.outboxRange();
      this.rangeAt = Date.now();
    }
    return this.relayBatch(this.range);
  }

  /**
   * Where events not relayed yet can be: from the oldest of them (or a few minutes back) to now,
   * so that the relay's own statements read only the days in the range.
   */
  private async outboxRange(): Promise<HistoryRange> {
    const { oldest, now } = await this.outbox.oldestUnrelayed();
    const lateCommits = new Date(now.getTime() - LATE_COMMIT_MS);
    return rangeFrom(oldest && oldest < lateCommits ? oldest : lateCommits);
  }

  /**
   * Moves new events from the outbox to deliveries: one per event and matching endpoint of the
   * event's organization (its `event_types` and `outcomes` filters: see
   * `OutboxRepository.matchingEndpoints`). The fan-out and the event's
   * `relayed_at` commit together, and (event, endpoint) is unique, so a relay that crashes and
   * restarts never delivers an event twice to one endpoint. A delivery takes its event's
   * `created_at` (the partition key of both): the unique index on (event, endpoint, created_at)
   * is one on (event, endpoint), since an event has one `created_at`. New deliveries are due at
   * once: the webhooks workers claim them from Postgres, woken by a NOTIFY on
   * `webhook_deliveries` sent when the batch commits (and by their own polling when a
   * notification is missed). Only events in `range` are looked at.
   * Returns how many events it relayed (a full batch means: call again at once).
   */
  private async relayBatch(range: HistoryRange): Promise<number> {
    const { events } = await this.dataSource.transaction(async (em) => {
      const events = await this.outbox.lockUnrelayed(em, range, RELAY_BATCH);
      if (events.length === 0) return { events };
      const ids = events.map((e) => e.id);
      const batch = spanning(events.map((e) => e.created_at));
      const matches = await this.outbox.matchingEndpoints(em, ids, batch);
      if (matches.length) {
        await this.deliveries.fanOut(em, matches, batch);
        await this.deliveries.notify(em, notifyPayload(matches.map((m) => m.endpoint_id)));
      }
      await this.outbox.markRelayed(em, ids, batch);
      return { events };
    });
    return events.length;
  }
}
