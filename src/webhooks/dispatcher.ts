import { exactly, type HistoryRange } from '../history/history-range.js';
import { logger } from '../lib/logger.js';
import { inSpan } from '../lib/telemetry.js';
import type { AttemptRecorder, AttemptReport } from './attempt-recorder.js';
import type { RecordedAttempt } from './attempts.repository.js';
import type { DeliveryClaimsRepository } from './delivery-claims.repository.js';
import { attemptError, decide, type RetryPolicy } from './delivery-decision.js';
import { DeliveryLanes } from './delivery-lanes.js';
import { notifiedEndpoints } from './delivery-notifications.js';
import { prepareRequest, type DeliveryTarget, type PreparedRequest } from './delivery-request.js';
import type { DeliverySender } from './delivery-send.js';

export interface DispatcherSettings {
  /** Attempts in flight in this process, all endpoints together. */
  concurrency: number;
  /** Attempts in flight in this process to any one endpoint. */
  endpointConcurrency: number;
  /** Lease of a claimed delivery; must outlast its wait in the lane and its attempt. */
  leaseSeconds: number;
  /** Scan interval, for retries coming due and missed notifications. */
  pollMs: number;
  /** Retained deliveries' range (see `retainedHistory`). */
  retained: () => HistoryRange;
  policy: RetryPolicy;
}

const ENDPOINTS_PER_SCAN = 1000;

/**
 * The scan interval once a scan found no open delivery at all: nothing can come due then but a new
 * delivery, and the relay's NOTIFY names it (a reconnected LISTEN scans at once). An idle platform
 * then costs a scan per 5 s, not two a second.
 */
const IDLE_SCAN_MS = 5000;

/** The most a lane claims ahead, in multiples of its endpoint's concurrency (see `Dispatcher.ahead`). */
const MOST_AHEAD = 10;

/** Endpoints whose answer times are kept; beyond, the record starts over (each endpoint then claims as a new one). */
const ANSWER_TIMES_KEPT = 50_000;

/** The claim statements a dispatcher uses. */
export type Claims = Pick<DeliveryClaimsRepository, 'openRange' | 'openEndpoints' | 'claimDue' | 'claimPaced' | 'findTarget' | 'release'>;

/** The webhooks worker's delivery loop: claim → lanes → prepare/send/decide → record. See docs/architecture.md#webhook-delivery. */
export class Dispatcher {
  private readonly lanes: DeliveryLanes;
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  /** The last claim filled all its room: more of anything may be due. */
  private roomLimited = false;
  /** Endpoints that may have due deliveries, in serving order (notified, scanned, or left with more by a claim). */
  private readonly candidates = new Set<string>();
  /** Endpoint id the next scan resumes after; '' from the start. */
  private scanAfter = '';
  /** Rate-limited endpoints as last scanned. Both claims recheck the limit, so a just-changed one waits a scan, never goes unpaced. */
  private readonly paced = new Set<string>();
  /** Where open deliveries are, so claims read only those days' partitions. */
  private open: HistoryRange;
  private stopped = false;
  private poll: NodeJS.Timeout | null = null;
  private readonly sends = new Set<Promise<void>>();
  /** Each endpoint's recent answer time, ms (a moving average): how far ahead its lane claims. */
  private readonly answerMs = new Map<string, number>();

  constructor(
    private readonly claims: Claims,
    private readonly recorder: Pick<AttemptRecorder, 'record' | 'drain'>,
    private readonly sender: Pick<DeliverySender, 'send'>,
    private readonly settings: DispatcherSettings,
  ) {
    this.open = settings.retained();
    this.lanes = new DeliveryLanes(settings.concurrency, settings.endpointConcurrency, () => this.pump());
  }

  start(): void {
    void this.scanAndPoll();
  }

  /** Scans now (the LISTEN connection came back: notifications may have been missed meanwhile). */
  rescan(): void {
    void this.scan();
  }

  private async scanAndPoll(): Promise<void> {
    const found = await this.scan();
    if (!this.stopped) this.poll = setTimeout(() => void this.scanAndPoll(), found > 0 ? this.settings.pollMs : IDLE_SCAN_MS);
  }

  /**
   * Finds endpoints with open deliveries (retries come due unnotified; notifications get missed), a
   * bounded batch per scan; returns how many it found (-1: the scan failed).
   */
  private async scan(): Promise<number> {
    if (this.stopped) return 0;
    let count = -1;
    try {
      this.open = await this.claims.openRange(this.settings.retained());
      const found = await this.claims.openEndpoints(this.scanAfter, ENDPOINTS_PER_SCAN, this.open);
      for (const { id, paced } of found) {
        this.candidates.add(id);
        if (paced) this.paced.add(id);
        else this.paced.delete(id);
      }
      this.scanAfter = found.length === ENDPOINTS_PER_SCAN ? found[found.length - 1].id : '';
      count = found.length;
    } catch (err) {
      logger.warn({ err }, 'webhooks: could not look for due deliveries; the next poll tries again');
    }
    this.wake();
    return count;
  }

  /** Claims unless every named endpoint's lane is full (those are claimed for as they drain). */
  notified(payload: string): void {
    const endpointIds = notifiedEndpoints(payload);
    if (!endpointIds) return this.rescan();
    for (const id of endpointIds) this.candidates.add(id);
    if (endpointIds.some((id) => this.wantsMore(id))) this.wake();
  }

  /** Claims now; calls during a claim coalesce into one more. */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = null;
      if (this.claimAgain) {
        this.claimAgain = false;
        this.wake();
      }
    });
  }

  /**
   * How many deliveries an endpoint's lane holds (in flight and waiting) after a claim. Twice its
   * concurrency at least; more for an endpoint that answers fast, up to MOST_AHEAD times, so a busy
   * fast endpoint costs a claim per many deliveries and its lane never runs dry while one is under
   * way. Never so many that the last would wait beyond half its lease behind the others.
   */
  private ahead(endpointId: string): number {
    const cap = this.settings.endpointConcurrency;
    const ms = this.answerMs.get(endpointId);
    if (ms === undefined) return 2 * cap;
    const withinLease = Math.floor((cap * this.settings.leaseSeconds * 500) / Math.max(1, ms));
    return Math.max(2 * cap, Math.min(MOST_AHEAD * cap, withinLease));
  }

  /** A lane takes more once it is down to half of what it holds after a claim. */
  private wantsMore(endpointId: string): boolean {
    return this.lanes.load(endpointId) <= this.ahead(endpointId) / 2;
  }

  private noteAnswer(endpointId: string, ms: number): void {
    const before = this.answerMs.get(endpointId);
    if (before === undefined && this.answerMs.size >= ANSWER_TIMES_KEPT) this.answerMs.clear();
    this.answerMs.set(endpointId, before === undefined ? ms : 0.8 * before + 0.2 * ms);
  }

  /** The room a claim may fill: twice the concurrency, so lanes have the next delivery at hand. */
  private room(): number {
    return 2 * this.settings.concurrency - this.lanes.inFlight - this.lanes.waiting;
  }

  private async claim(): Promise<void> {
    const room = this.room();
    // Claim in useful amounts: a claim costs one round trip whatever it brings.
    if (room < Math.max(1, Math.floor(this.settings.concurrency / 4))) return;
    // A lane takes more once it is down to half of `ahead`, then up to `ahead`: one claim serves
    // many attempts, and the lane never runs dry meanwhile. But no lane more than its share of the
    // room while others want: many endpoints with a few deliveries each (a reseller's tenants), or
    // named by notifications whose deliveries another worker took, would otherwise each reserve a
    // whole `ahead` of the room, so that a claim served a handful of them and the rest waited for
    // the next scan.
    const wanting = [...this.candidates].filter((endpointId) => this.wantsMore(endpointId));
    const share = Math.ceil(room / wanting.length);
    const wanted: Array<{ endpointId: string; quota: number }> = [];
    let left = room;
    for (const endpointId of wanting) {
      if (left <= 0) break;
      const quota = Math.min(this.ahead(endpointId) - this.lanes.load(endpointId), share, left);
      wanted.push({ endpointId, quota });
      left -= quota;
    }
    if (wanted.length === 0) return;
    // Rate-limited endpoints have a claim statement of their own, so pacing costs the claims of
    // the others nothing (Postgres plans each claim at every execution).
    const pacedWanted = this.paced.size === 0 ? [] : wanted.filter((w) => this.paced.has(w.endpointId));
    const freeWanted = pacedWanted.length === 0 ? wanted : wanted.filter((w) => !this.paced.has(w.endpointId));
    const { leaseSeconds } = this.settings;
    let free: DeliveryTarget[];
    let paced: { targets: DeliveryTarget[]; answeredAt: number };
    try {
      [free, paced] = await Promise.all([
        this.claims.claimDue(freeWanted, leaseSeconds, this.open),
        this.claims.claimPaced(pacedWanted, leaseSeconds, this.open).then((targets) => ({ targets, answeredAt: Date.now() })),
      ]);
    } catch (err) {
      logger.warn({ err }, 'webhooks: could not claim due deliveries; the next poll tries again');
      return;
    }
    const got = new Map<string, number>();
    const take = (target: DeliveryTarget, notBefore: number | null) => {
      this.lanes.add(target, notBefore);
      got.set(target.endpoint_id, (got.get(target.endpoint_id) ?? 0) + 1);
    };
    for (const target of free) take(target, null);
    // Send slots count from the answer: never before the slot, whatever the clocks of the
    // database and this machine say. A lane sends in slot order.
    paced.targets.sort((a, b) => a.wait_ms! - b.wait_ms!);
    for (const target of paced.targets) take(target, paced.answeredAt + target.wait_ms!);
    for (const { endpointId, quota } of wanted) {
      // Fewer than asked: nothing more is due there now. Else it goes to the back of the line.
      this.candidates.delete(endpointId);
      if ((got.get(endpointId) ?? 0) === quota) this.candidates.add(endpointId);
    }
    this.roomLimited = left <= 0;
    // Endpoints the room did not reach this time are claimed for at once, while room is left.
    if (wanted.length < wanting.length) this.claimAgain = true;
    this.pump();
  }

  /** Claims again only when it can bring something, so a busy endpoint costs a claim per batch, not per delivery. */
  private afterAttempt(endpointId: string): void {
    // Down to half of `ahead`, a lane with more due takes more (one claim at a time: they coalesce).
    const drained = this.candidates.has(endpointId) && this.wantsMore(endpointId);
    if (drained || (this.roomLimited && this.room() >= this.settings.concurrency)) this.wake();
  }

  /** Starts the attempts the lanes let go now; gives back deliveries whose send slot passed. */
  private pump(): void {
    const late: DeliveryTarget[] = [];
    for (let taken = this.lanes.take(); taken; taken = this.lanes.take()) {
      if ('late' in taken) {
        late.push(taken.late);
        continue;
      }
      const target = taken.send;
      // Lane room frees when the receiver answers; the delivery stays leased until its batch is recorded.
      const send: Promise<void> = this.answer(target)
        .then(({ recorded }) => void recorded.catch((err) => this.notRecorded(target, err)))
        .catch((err) => this.notRecorded(target, err))
        .finally(() => {
          this.sends.delete(send);
          this.lanes.done(target.endpoint_id);
          this.pump();
          this.afterAttempt(target.endpoint_id);
        });
      this.sends.add(send);
    }
    if (late.length > 0)
      void this.claims.release(late).catch((err) => logger.warn({ err }, 'webhooks: late deliveries not given back; their leases end on their own'));
  }

  private notRecorded(target: DeliveryTarget, err: unknown): void {
    logger.error({ err, deliveryId: target.delivery_id }, 'webhooks: attempt not recorded; its lease ends and it is tried again');
  }

  /**
   * Prepare, send and decide; resolves with the answer once it came, and when it will be recorded.
   * Tracing on, the attempt is a `webhook delivery` span in its call's trace, and the receiver gets
   * that span as its `traceparent`.
   */
  private answer(target: DeliveryTarget): Promise<{ report: AttemptReport; recorded: Promise<void> }> {
    const attempt = target.attempt_count + 1;
    const attributes = { 'ringlane.delivery_id': target.delivery_id, 'ringlane.endpoint_id': target.endpoint_id, 'ringlane.attempt': attempt };
    return inSpan('webhook delivery', { parent: target.trace_parent, kind: 'client', attributes }, async (span) => {
      const request = prepareRequest(target);
      if (span) request.headers.traceparent = span.traceparent;
      const answered = await this.send(target, request, attempt);
      const { result, decision } = answered.report;
      span?.set({
        'ringlane.event_type': typeof target.payload.event === 'string' ? target.payload.event : null,
        'http.response.status_code': 'status' in result ? result.status : null,
        'ringlane.duration_ms': result.durationMs,
        'ringlane.outcome': result.kind,
        'ringlane.delivery_status': decision.status,
      });
      return answered;
    });
  }

  private async send(target: DeliveryTarget, request: PreparedRequest, attempt: number): Promise<{ report: AttemptReport; recorded: Promise<void> }> {
    const result = await this.sender.send(request);
    this.noteAnswer(target.endpoint_id, result.durationMs);
    const decision = decide(result, attempt, this.settings.policy);
    const recorded: RecordedAttempt = {
      deliveryId: target.delivery_id,
      deliveryCreatedAt: target.created_at,
      endpointId: target.endpoint_id,
      attemptId: request.attemptId,
      attemptedAt: request.attemptedAt,
      responseStatus: 'status' in result ? result.status : null,
      durationMs: result.durationMs,
      error: attemptError(result),
      responseBody: 'body' in result ? result.body : null,
      status: decision.status,
      nextAttemptAt: decision.status === 'retrying' ? new Date(Date.now() + decision.retryInMs) : null,
      endpointGone: decision.status === 'failed' && decision.reason === 'gone',
    };
    const report = { target, result, decision, recorded };
    return { report, recorded: this.recorder.record(report) };
  }

  /** A support retry: one attempt now, outside the lanes; resolves once recorded (null: unknown delivery). */
  async deliverNow(deliveryId: string, createdAt: Date): Promise<{ report: AttemptReport; previousStatus: string } | null> {
    const target = await this.claims.findTarget(deliveryId, exactly(createdAt));
    if (!target) return null;
    const { report, recorded } = await this.answer(target);
    await recorded;
    return { report, previousStatus: target.status };
  }

  /** Finishes attempts in flight and gives back unsent claims, so another worker takes them without waiting out the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearTimeout(this.poll);
    await this.claiming;
    const unsent = this.lanes.drain();
    await Promise.all(this.sends);
    await this.recorder.drain();
    await this.claims.release(unsent).catch((err) => logger.warn({ err }, 'webhooks: leases not given back; they end on their own'));
  }
}
