import type { DeliveryTarget } from './delivery-request.js';

/**
 * How late after its send slot a rate-limited endpoint's delivery may still go out. One later
 * (its lane was held up) is given back, due again, and gets a new slot at a later claim: sent
 * late beside the deliveries of the next slots, it would make a burst over the rate.
 */
export const PACE_LATE_MS = 50;

/** A claimed delivery in its lane. */
interface Waiting {
  target: DeliveryTarget;
  /** Its send slot (a rate-limited endpoint's; Date.now() ms): not sent before. Null: at once. */
  notBefore: number | null;
}

interface Lane {
  inFlight: number;
  waiting: Waiting[];
  /** Set while the lane's next delivery waits for its send slot (the lane is then not ready). */
  slotTimer: NodeJS.Timeout | null;
}

/** What `take` hands out: a delivery to send now, or one whose slot passed too long ago, to give back. */
export type Taken = { send: DeliveryTarget } | { late: DeliveryTarget };

/**
 * The claimed deliveries of one webhooks worker, waiting in per-endpoint lanes in memory. Each
 * lane sends at most `endpointConcurrency` at once, so a slow receiver holds its own lane and
 * nothing else; ready lanes take turns (round robin) up to the process's `concurrency`. A
 * rate-limited endpoint's deliveries come with their send slots, and its lane sends each in its
 * slot.
 */
export class DeliveryLanes {
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with a waiting delivery and room to send it, in the order they became ready. */
  private readonly ready: string[] = [];
  inFlight = 0;
  waiting = 0;

  constructor(
    private readonly concurrency: number,
    private readonly endpointConcurrency: number,
    /** Called when a lane's send slot comes: it may send again. */
    private readonly onSlot: () => void,
  ) {}

  /** Deliveries in flight and waiting for one endpoint. */
  load(endpointId: string): number {
    const lane = this.lanes.get(endpointId);
    return lane ? lane.inFlight + lane.waiting.length : 0;
  }

  add(target: DeliveryTarget, notBefore: number | null): void {
    let lane = this.lanes.get(target.endpoint_id);
    if (!lane) {
      lane = { inFlight: 0, waiting: [], slotTimer: null };
      this.lanes.set(target.endpoint_id, lane);
    }
    lane.waiting.push({ target, notBefore });
    this.waiting++;
    if (lane.waiting.length === 1 && lane.inFlight < this.endpointConcurrency) this.ready.push(target.endpoint_id);
  }

  /**
   * The next delivery to send (counted in flight until `done`), round robin over the ready lanes,
   * while the process has room; null when none can go now. A lane whose next send slot has not
   * come waits for it outside `ready`.
   */
  take(): Taken | null {
    while (this.inFlight < this.concurrency && this.ready.length > 0) {
      const endpointId = this.ready.shift()!;
      const lane = this.lanes.get(endpointId)!;
      const { notBefore } = lane.waiting[0];
      const early = notBefore === null ? 0 : notBefore - Date.now();
      if (early > 0) {
        lane.slotTimer = setTimeout(() => {
          lane.slotTimer = null;
          this.ready.push(endpointId);
          this.onSlot();
        }, early);
        continue;
      }
      const target = lane.waiting.shift()!.target;
      this.waiting--;
      if (-early > PACE_LATE_MS) {
        if (lane.waiting.length > 0) this.ready.push(endpointId);
        else if (lane.inFlight === 0) this.lanes.delete(endpointId);
        return { late: target };
      }
      lane.inFlight++;
      this.inFlight++;
      if (lane.waiting.length > 0 && lane.inFlight < this.endpointConcurrency) this.ready.push(endpointId);
      return { send: target };
    }
    return null;
  }

  /** A send of `endpointId`'s lane is over (the receiver answered): its room is free. */
  done(endpointId: string): void {
    const lane = this.lanes.get(endpointId)!;
    this.inFlight--;
    lane.inFlight--;
    if (lane.waiting.length > 0 && lane.inFlight === this.endpointConcurrency - 1) this.ready.push(endpointId);
    if (lane.inFlight === 0 && lane.waiting.length === 0) this.lanes.delete(endpointId);
  }

  /** Empties every lane (a worker stopping): the deliveries that were waiting, to give back. */
  drain(): DeliveryTarget[] {
    for (const lane of this.lanes.values()) if (lane.slotTimer) clearTimeout(lane.slotTimer);
    const unsent = [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0).map((w) => w.target));
    this.ready.length = 0;
    this.waiting = 0;
    return unsent;
  }
}
