import type { DataSource } from 'typeorm';
import { config } from '../config.js';
import { rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import { applicationName } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { listen, type Listener } from '../lib/pg-listen.js';
import type { OutboxRepository } from './outbox.repository.js';
import { notifyDeliveries, notifyPayload } from './delivery-notifications.js';

/** Events per relay transaction; a full batch means more are waiting. */
export const RELAY_BATCH = 500;

/** Idle poll: the most a missed notification costs. */
const POLL_MS = 1000;

/** Pause after a partial batch: relaying each trickle at once would cost a transaction and a wake-up of every worker per few events. */
const GATHER_MS = 20;

/** How often the outbox range (oldest unrelayed event) is looked up again. */
const OUTBOX_RANGE_MS = 10_000;

/** `created_at` is the transaction's start, which may commit later: the range reaches this far back to see it at once. */
const LATE_COMMIT_MS = 5 * 60_000;

/** Moves committed events from the outbox into deliveries; see docs/architecture.md#webhook-delivery. */
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

  /** The days unrelayed events can be in, so the relay's statements read only those partitions. */
  private async outboxRange(): Promise<HistoryRange> {
    const { oldest, now } = await this.outbox.oldestUnrelayed();
    const lateCommits = new Date(now.getTime() - LATE_COMMIT_MS);
    return rangeFrom(oldest && oldest < lateCommits ? oldest : lateCommits);
  }

  /**
   * Fans out one batch. Fan-out, `relayed_at` and the NOTIFY commit together and (event, endpoint)
   * is unique, so a crashed relay never delivers an event twice to one endpoint.
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

/** The relay process's loop: woken by NOTIFY on `call_events`, polling too so it relays while LISTEN is down. */
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
