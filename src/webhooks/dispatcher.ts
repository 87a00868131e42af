import { exactly, type HistoryRange } from '../history/history-range.js';
import { logger } from '../lib/logger.js';
import type { WebhookMetrics } from '../lib/metrics.js';
import { attemptError, decide, type Decision, type RetryPolicy } from './delivery-decision.js';
import { prepareRequest, type DeliveryTarget } from './delivery-request.js';
import type { DeliverySender, SendResult } from './delivery-send.js';
import type { RecordedAttempt, WebhookDeliveryRepository } from './webhook-delivery.repository.js';

export interface DispatcherSettings {
  /** Attempts in flight in this process, all endpoints together. */
  concurrency: number;
  /** Attempts in flight in this process to any one endpoint. */
  endpointConcurrency: number;
  /** How long a claimed delivery is held before another worker may take it (it must outlast its wait and its attempt). */
  leaseSeconds: number;
  /** How often Postgres is asked for due deliveries when nothing says there are new ones. */
  pollMs: number;
  disableAfterHours: number;
  /** What is retained of deliveries now (older ones are gone, or about to be): see `retainedHistory`. */
  retained: () => HistoryRange;
  policy: RetryPolicy;
}

/** Endpoints one scan looks at, at most. */
const ENDPOINTS_PER_SCAN = 1000;

/** Attempts recorded together: whichever comes first, this many or this long after the first. */
export const RECORD_BATCH = 200;
const RECORD_WAIT_MS = 10;

/**
 * How late after its send slot a rate-limited endpoint's delivery may still go out. One later
 * (its lane was held up) is given back, due again, and gets a new slot at a later claim: sent
 * late beside the deliveries of the next slots, it would make a burst over the rate.
 */
export const PACE_LATE_MS = 50;

/** What became of one attempt, once recorded. */
export interface AttemptReport {
  target: DeliveryTarget;
  result: SendResult;
  decision: Decision;
  recorded: RecordedAttempt;
}

export interface DispatcherHooks {
  /** Deliveries that became `failed` (attempts used up, or 410 Gone), after they were recorded. */
  onFailed?: (reports: AttemptReport[]) => Promise<void>;
}

/** A claimed delivery in its lane. */
interface Waiting {
  target: DeliveryTarget;
  /** Its send slot (a rate-limited endpoint's; Date.now() ms): not sent before. Null: at once. */
  notBefore: number | null;
}

interface Lane {
  inFlight: number;
  waiting: Waiting[];
  /** Set while the lane's next delivery waits for its send slot (the lane is then not in `ready`). */
  slotTimer: NodeJS.Timeout | null;
}

/**
 * The webhooks worker's delivery loop. Postgres is the queue: due deliveries are claimed in
 * batches (fair: at most a few per endpoint per claim, and none for an endpoint whose lane is
 * full) and wait in per-endpoint lanes in memory; each lane sends at most
 * `endpointConcurrency` at once, so a slow receiver holds its own lane and nothing else, and a
 * delivery held back costs nothing (it is not claimed until there is room). A rate-limited
 * endpoint's deliveries come with their send slots (see `WebhookDeliveryRepository.claimPaced`),
 * and its lane sends each in its slot. Each attempt goes through the stages prepare → send →
 * decide → record, and attempts are recorded in batches, one statement each.
 */
export class Dispatcher {
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with a waiting delivery and room to send it, in the order they became ready. */
  private readonly ready: string[] = [];
  private inFlight = 0;
  private waiting = 0;
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  /** The last claim filled all its room: more of anything may be due. */
  private roomLimited = false;
  /**
   * Endpoints that may have due deliveries, in the order they are served: named by the relay's
   * notifications, found by the periodic endpoint scan, or left with more due by a claim.
   */
  private readonly candidates = new Set<string>();
  /** Where the next endpoint scan starts (endpoint ids in order; '' from the first). */
  private scanAfter = '';
  /**
   * Endpoints with a rate limit, as the scans last found them: their claims are
   * `claimPaced`'s. Each claim statement also checks the limit itself, so an endpoint whose
   * limit was just set or removed waits for the next scan, never goes unpaced.
   */
  private readonly paced = new Set<string>();
  /** Where open deliveries are (looked up at each scan): claims read only those days' partitions. */
  private open: HistoryRange;
  private stopped = false;
  private poll: NodeJS.Timeout | null = null;
  private readonly sends = new Set<Promise<void>>();
  private batch: Array<{ report: AttemptReport; done: () => void; failed: (err: unknown) => void }> = [];
  private batchTimer: NodeJS.Timeout | null = null;
  private recording: Promise<void> = Promise.resolve();

  constructor(
    private readonly repository: WebhookDeliveryRepository,
    private readonly sender: DeliverySender,
    private readonly metrics: WebhookMetrics,
    private readonly settings: DispatcherSettings,
    private readonly hooks: DispatcherHooks = {},
  ) {
    this.open = settings.retained();
  }

  start(): void {
    this.poll = setInterval(() => void this.scan(), this.settings.pollMs);
    void this.scan();
  }

  /**
   * Looks up where open deliveries are and finds endpoints with some (retries come due without
   * a notification; a notification may be missed), then claims. A bounded number of endpoints
   * per scan, resuming after the last one found, so a very large number of endpoints is
   * covered over several scans.
   */
  private async scan(): Promise<void> {
    if (this.stopped) return;
    try {
      this.open = await this.repository.openRange(this.settings.retained());
      const found = await this.repository.openEndpoints(this.scanAfter, ENDPOINTS_PER_SCAN, this.open);
      for (const { id, paced } of found) {
        this.candidates.add(id);
        if (paced) this.paced.add(id);
        else this.paced.delete(id);
      }
      this.scanAfter = found.length === ENDPOINTS_PER_SCAN ? found[found.length - 1].id : '';
    } catch (err) {
      logger.warn({ err }, 'webhooks: could not look for due deliveries; the next poll tries again');
    }
    this.wake();
  }

  /**
   * A notification from the relay (its payload: the endpoints with new deliveries, or `*`/empty
   * for "look"): claim, unless every endpoint named has a full lane already. Those are claimed
   * for as their lanes drain.
   */
  notified(payload: string): void {
    if (payload === '' || payload === '*') return void this.scan();
    const endpointIds = payload.split(',');
    for (const id of endpointIds) this.candidates.add(id);
    if (endpointIds.some((id) => !this.isFull(id))) this.wake();
  }

  private isFull(endpointId: string): boolean {
    const lane = this.lanes.get(endpointId);
    return lane !== undefined && lane.inFlight + lane.waiting.length > this.settings.endpointConcurrency;
  }

  /** New deliveries may be due (a support action, the poll): claim now. */
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

  /** The room a claim may fill: twice the concurrency, so lanes have the next delivery at hand. */
  private room(): number {
    return 2 * this.settings.concurrency - this.inFlight - this.waiting;
  }

  private async claim(): Promise<void> {
    const room = this.room();
    // Claim in useful amounts: a claim costs one round trip whatever it brings.
    if (room < Math.max(1, Math.floor(this.settings.concurrency / 4))) return;
    // A lane takes more once it is down to `endpointConcurrency` (in flight and waiting), then
    // up to twice that: one claim serves many attempts, and the lane never runs dry meanwhile.
    const cap = this.settings.endpointConcurrency;
    const wanted: Array<{ endpointId: string; quota: number }> = [];
    let left = room;
    for (const endpointId of this.candidates) {
      if (left <= 0) break;
      const lane = this.lanes.get(endpointId);
      const load = lane ? lane.inFlight + lane.waiting.length : 0;
      if (load > cap) continue;
      const quota = Math.min(2 * cap - load, left);
      wanted.push({ endpointId, quota });
      left -= quota;
    }
    if (wanted.length === 0) return;
    // Rate-limited endpoints are claimed by a statement of their own: Postgres plans a claim at
    // every execution (it prunes partitions by the range), so pacing in the one statement made
    // every claim cost more to plan, paced endpoints or not.
    const pacedWanted = this.paced.size === 0 ? [] : wanted.filter((w) => this.paced.has(w.endpointId));
    const freeWanted = pacedWanted.length === 0 ? wanted : wanted.filter((w) => !this.paced.has(w.endpointId));
    const { leaseSeconds } = this.settings;
    let free: DeliveryTarget[];
    let paced: { targets: DeliveryTarget[]; answeredAt: number };
    try {
      [free, paced] = await Promise.all([
        this.repository.claimDue(freeWanted, leaseSeconds, this.open),
        this.repository.claimPaced(pacedWanted, leaseSeconds, this.open).then((targets) => ({ targets, answeredAt: Date.now() })),
      ]);
    } catch (err) {
      logger.warn({ err }, 'webhooks: could not claim due deliveries; the next poll tries again');
      return;
    }
    const got = new Map<string, number>();
    const take = (target: DeliveryTarget, notBefore: number | null) => {
      this.enqueue(target, notBefore);
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
    this.pump();
  }

  /**
   * After an attempt: claim again only when it can bring something, so a busy endpoint costs a
   * claim per batch, not per delivery (new deliveries and retries coming due wake the
   * dispatcher through NOTIFY and the poll).
   */
  private afterAttempt(endpointId: string, lane: Lane): void {
    // At or below its cap, a lane with more due takes more (one claim at a time: they coalesce).
    const drained = this.candidates.has(endpointId) && lane.inFlight + lane.waiting.length <= this.settings.endpointConcurrency;
    if (drained || (this.roomLimited && this.room() >= this.settings.concurrency)) this.wake();
  }

  private enqueue(target: DeliveryTarget, notBefore: number | null): void {
    let lane = this.lanes.get(target.endpoint_id);
    if (!lane) {
      lane = { inFlight: 0, waiting: [], slotTimer: null };
      this.lanes.set(target.endpoint_id, lane);
    }
    lane.waiting.push({ target, notBefore });
    this.waiting++;
    if (lane.waiting.length === 1 && lane.inFlight < this.settings.endpointConcurrency) this.ready.push(target.endpoint_id);
  }

  /**
   * Starts attempts from the ready lanes, round robin, up to the process's concurrency. A lane
   * whose next delivery's send slot has not come waits for it outside `ready`; one whose slot
   * passed more than PACE_LATE_MS ago is given back.
   */
  private pump(): void {
    const late: DeliveryTarget[] = [];
    while (this.inFlight < this.settings.concurrency && this.ready.length > 0) {
      const endpointId = this.ready.shift()!;
      const lane = this.lanes.get(endpointId)!;
      const { notBefore } = lane.waiting[0];
      const early = notBefore === null ? 0 : notBefore - Date.now();
      if (early > 0) {
        lane.slotTimer = setTimeout(() => {
          lane.slotTimer = null;
          this.ready.push(endpointId);
          this.pump();
        }, early);
        continue;
      }
      const target = lane.waiting.shift()!.target;
      this.waiting--;
      if (-early > PACE_LATE_MS) {
        late.push(target);
        if (lane.waiting.length > 0) this.ready.push(endpointId);
        else if (lane.inFlight === 0) this.lanes.delete(endpointId);
        continue;
      }
      lane.inFlight++;
      this.inFlight++;
      if (lane.waiting.length > 0 && lane.inFlight < this.settings.endpointConcurrency) this.ready.push(endpointId);
      // The lane's slot is free once the receiver has answered; recording follows in a batch,
      // and the delivery stays leased (not due) until it is recorded.
      const send: Promise<void> = this.answer(target)
        .then(({ recorded }) => void recorded.catch((err) => this.notRecorded(target, err)))
        .catch((err) => this.notRecorded(target, err))
        .finally(() => {
          this.sends.delete(send);
          this.inFlight--;
          lane.inFlight--;
          if (lane.waiting.length > 0 && lane.inFlight === this.settings.endpointConcurrency - 1) this.ready.push(endpointId);
          if (lane.inFlight === 0 && lane.waiting.length === 0) this.lanes.delete(endpointId);
          this.pump();
          this.afterAttempt(endpointId, lane);
        });
      this.sends.add(send);
    }
    if (late.length > 0) void this.repository.release(late).catch((err) => logger.warn({ err }, 'webhooks: late deliveries not given back; their leases end on their own'));
  }

  private notRecorded(target: DeliveryTarget, err: unknown): void {
    logger.error({ err, deliveryId: target.delivery_id }, 'webhooks: attempt not recorded; its lease ends and it is tried again');
  }

  /** One attempt through every stage: prepare, send, decide, record. Resolves once recorded. */
  async attempt(target: DeliveryTarget): Promise<AttemptReport> {
    const { report, recorded } = await this.answer(target);
    await recorded;
    return report;
  }

  /** Prepare, send and decide; resolves with the answer once it came, and when it will be recorded. */
  private async answer(target: DeliveryTarget): Promise<{ report: AttemptReport; recorded: Promise<void> }> {
    const request = prepareRequest(target);
    const result = await this.sender.send(request);
    const attempt = target.attempt_count + 1;
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
    this.metrics.countAttempt(result.kind === 'rejected' ? 'failed_status' : result.kind === 'accepted' ? 'succeeded' : result.kind);
    const written = new Promise<void>((done, failed) => {
      this.batch.push({ report, done, failed });
      if (this.batch.length >= RECORD_BATCH) this.flush();
      else this.batchTimer ??= setTimeout(() => this.flush(), RECORD_WAIT_MS);
    });
    return { report, recorded: written };
  }

  /** Records the attempts gathered so far, in one statement, after the batch before it. */
  private flush(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    this.recording = this.recording.then(async () => {
      try {
        const disabled = await this.repository.record(batch.map((b) => b.report.recorded), this.settings.disableAfterHours);
        // A disabled endpoint's other deliveries wait, not due, until it is enabled again.
        await this.repository.pauseOrResume(disabled);
        const now = Date.now();
        for (const { report } of batch) {
          if (report.decision.status === 'succeeded') this.metrics.observeLatency((now - report.target.created_at.getTime()) / 1000);
        }
        const failed = batch.filter((b) => b.report.decision.status === 'failed').map((b) => b.report);
        if (failed.length > 0) await this.hooks.onFailed?.(failed).catch((err) => logger.warn({ err }, 'webhooks: failed deliveries not shown in the queue'));
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.failed(err);
      }
    });
  }

  /**
   * A support retry: one attempt of the delivery now, whatever its status, outside the lanes.
   * Resolves once recorded, with the delivery's status before it; null for an unknown delivery.
   * Its `createdAt` says which partition holds it; without it (a job queued before deliveries
   * were partitioned), every retained day is looked in.
   */
  async deliverNow(deliveryId: string, createdAt?: Date): Promise<{ report: AttemptReport; previousStatus: string } | null> {
    const target = await this.repository.findTarget(deliveryId, createdAt ? exactly(createdAt) : this.settings.retained());
    if (!target) return null;
    return { report: await this.attempt(target), previousStatus: target.status };
  }

  /**
   * Stops claiming, lets the attempts in flight finish and be recorded, and gives back the
   * deliveries claimed but not attempted, so another worker takes them at once.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    await this.claiming;
    for (const lane of this.lanes.values()) if (lane.slotTimer) clearTimeout(lane.slotTimer);
    const unsent = [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0).map((w) => w.target));
    this.ready.length = 0;
    this.waiting = 0;
    await Promise.all(this.sends);
    this.flush();
    await this.recording;
    await this.repository.release(unsent).catch((err) => logger.warn({ err }, 'webhooks: leases not given back; they end on their own'));
  }
}
