import type { DataSource } from 'typeorm';
import { config } from '../config.js';
import { rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import { applicationName } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { listen, type Listener } from '../lib/pg-listen.js';
import type { OutboxRepository } from './outbox.repository.js';
import { notifyDeliveries, notifyPayload } from './delivery-notifications.js';

/** Events relayed in one transaction at most; a full batch means more are waiting. */
export const RELAY_BATCH = 500;

/** How long the relay sleeps when nothing notifies it (a missed notification costs at most this). */
const POLL_MS = 1000;

/**
 * After a partial batch, the relay waits this long before the next: events commit one status
 * change at a time, and relaying each trickle at once would cost a transaction (and a wake-up
 * of every webhooks worker) per few events. Gathering them costs this much latency.
 */
const GATHER_MS = 20;

/** How often the relay looks through all of `call_events` for the oldest event not relayed. */
const OUTBOX_RANGE_MS = 10_000;

/**
 * An event's `created_at` is its transaction's start, and it may commit a while later: the
 * outbox range starts this far back, so that one committing late is still seen at once.
 */
const LATE_COMMIT_MS = 5 * 60_000;

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
        await this.outbox.fanOut(em, matches, batch);
        await notifyDeliveries(em, notifyPayload(matches.map((m) => m.endpoint_id)));
      }
      await this.outbox.markRelayed(em, ids, batch);
      return { events };
    });
    return events.length;
  }
}

/**
 * The relay process's loop: a batch after another while there are events, woken by the
 * database's NOTIFY on `call_events` when there are none, and polling besides, so it relays
 * while its LISTEN connection is down and reconnecting too.
 */
export class RelayLoop {
  private stopping = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();
  private listener: Listener | null = null;

  constructor(private readonly relay: Relay) {}

  async start(): Promise<void> {
    // Events committed while the LISTEN connection was away notified no one: look at once.
    const look = () => this.wake?.();
    this.listener = await listen(config.databaseUrl, 'call_events', look, { onReconnect: look, applicationName });
    if (!this.stopping) this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let relayed = 0;
      try {
        relayed = await this.relay.batch();
      } catch (err) {
        logger.error({ err }, 'relay batch failed; retrying');
      }
      if (this.stopping) return;
      if (relayed > 0 && relayed < RELAY_BATCH) await new Promise((r) => setTimeout(r, GATHER_MS));
      if (relayed === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = null;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await this.listener?.close();
  }
}
