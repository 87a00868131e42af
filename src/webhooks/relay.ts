import type { DataSource } from 'typeorm';
import { config } from '../config.js';
import { rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import { applicationName } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { inSpan, markSpan } from '../lib/telemetry.js';
import { listen, type Listener } from '../lib/pg-listen.js';
import type { EndpointMatch, OutboxRepository, UnrelayedEvent } from './outbox.repository.js';
import { notifyDeliveries, notifyPayload } from './delivery-notifications.js';

/** Events per relay transaction; a full batch means more are waiting. */
export const RELAY_BATCH = 500;

/**
 * Polls while waiting, from the first to the last, doubling: the most a missed notification costs.
 * Short at first: an event whose transaction checked `relay_wakeup` just before the relay said it
 * waits, and committed just after the relay last looked, sent no NOTIFY.
 */
const FIRST_POLL_MS = 25;
const LAST_POLL_MS = 5000;

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
    const { events, matches, batchSpan } = await this.dataSource.transaction(async (em) => {
      const events = await this.outbox.lockUnrelayed(em, range, RELAY_BATCH);
      if (events.length === 0) return { events, matches: [], batchSpan: null };
      // Tracing on, a batch is a span (none for an empty look); the span of each event it relays, in that event's call's trace, links to it.
      return inSpan('relay batch', { attributes: { 'ringlane.events': events.length } }, async (span) => {
        const ids = events.map((e) => e.id);
        const batch = spanning(events.map((e) => e.created_at));
        const matches = await this.outbox.matchingEndpoints(em, ids, batch);
        if (matches.length) {
          await this.outbox.fanOut(em, matches, batch);
          await notifyDeliveries(em, notifyPayload(matches.map((m) => m.endpoint_id)));
        }
        await this.outbox.markRelayed(em, ids, batch);
        span?.set({ 'ringlane.deliveries': matches.length });
        return { events, matches, batchSpan: span?.traceparent ?? null };
      });
    });
    // Once committed: a rolled-back batch relayed nothing.
    if (batchSpan) relayedInTraces(events, matches, batchSpan);
    return events.length;
  }
}

/**
 * A `relay event` span in each call's trace, under the call's context and linked to the batch
 * span: a call's trace shows when its event was relayed, into how many deliveries, and in which
 * batch, however many calls the batch served.
 */
function relayedInTraces(events: UnrelayedEvent[], matches: EndpointMatch[], batchSpan: string): void {
  const deliveries = new Map<string, number>();
  for (const m of matches) deliveries.set(m.event_id, (deliveries.get(m.event_id) ?? 0) + 1);
  for (const event of events) {
    if (!event.trace_parent) continue;
    const attributes = { 'ringlane.event_id': event.id, 'ringlane.event_type': event.event, 'ringlane.deliveries': deliveries.get(event.id) ?? 0 };
    markSpan('relay event', { parent: event.trace_parent, links: [batchSpan], attributes });
  }
}

/**
 * The relay process's loop. Busy, it polls (gathering GATHER_MS after a partial batch) and event
 * writers send no NOTIFY; with nothing left, it says it waits (`relay_wakeup`), looks once more, and
 * waits for a NOTIFY on `call_events` or its next poll (so it relays while LISTEN is down too).
 */
export class RelayLoop {
  private stopping = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();
  private listener: Listener | null = null;
  /** What this relay last told `relay_wakeup`; unknown at start (a relay killed while busy left false). */
  private asleep: boolean | null = null;

  constructor(
    private readonly relay: Relay,
    private readonly outbox: Pick<OutboxRepository, 'setRelayAsleep'>,
  ) {}

  async start(): Promise<void> {
    // Events committed while the LISTEN connection was away notified no one: look at once.
    const look = () => this.wake?.();
    this.listener = await listen(config.databaseDirectUrl, 'call_events', look, { onReconnect: look, applicationName });
    if (!this.stopping) this.loop = this.run();
  }

  private async run(): Promise<void> {
    let pollMs = FIRST_POLL_MS;
    while (!this.stopping) {
      let relayed = 0;
      try {
        relayed = await this.relay.batch();
        if (relayed > 0 && this.asleep !== false) await this.say(false);
        if (relayed === 0 && this.asleep !== true) {
          await this.say(true);
          continue; // look once more: events committed before writers could see it notified no one
        }
      } catch (err) {
        logger.error({ err }, 'relay batch failed; retrying');
      }
      if (this.stopping) return;
      if (relayed > 0) {
        pollMs = FIRST_POLL_MS;
        if (relayed < RELAY_BATCH) await new Promise((r) => setTimeout(r, GATHER_MS));
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      pollMs = Math.min(LAST_POLL_MS, pollMs * 2);
    }
  }

  private async say(asleep: boolean): Promise<void> {
    await this.outbox.setRelayAsleep(asleep);
    this.asleep = asleep;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await this.listener?.close();
  }
}
