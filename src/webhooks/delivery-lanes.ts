import type { DeliveryTarget } from './delivery-request.js';

/** A paced delivery later than this past its slot is given back for a new slot: sent beside the next slots, it would burst over the rate. */
export const PACE_LATE_MS = 50;

interface Waiting {
  target: DeliveryTarget;
  /** Send slot in Date.now() ms (rate-limited endpoints); null: at once. */
  notBefore: number | null;
}

interface Lane {
  inFlight: number;
  waiting: Waiting[];
  /** Set while the next delivery waits for its slot; the lane is then not in `ready`. */
  slotTimer: NodeJS.Timeout | null;
}

/** A delivery to send now, or one past its slot by more than PACE_LATE_MS, to give back. */
export type Taken = { send: DeliveryTarget } | { late: DeliveryTarget };

/** Claimed deliveries in per-endpoint lanes (at most `endpointConcurrency` each, so a slow receiver holds only its own), served round robin. */
export class DeliveryLanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly ready: string[] = [];
  inFlight = 0;
  waiting = 0;

  constructor(
    private readonly concurrency: number,
    private readonly endpointConcurrency: number,
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

  /** The next delivery to hand out (in flight until `done`); null when none can go now. */
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

  /** The receiver answered: frees the lane's room. */
  done(endpointId: string): void {
    const lane = this.lanes.get(endpointId)!;
    this.inFlight--;
    lane.inFlight--;
    if (lane.waiting.length > 0 && lane.inFlight === this.endpointConcurrency - 1) this.ready.push(endpointId);
    if (lane.inFlight === 0 && lane.waiting.length === 0) this.lanes.delete(endpointId);
  }

  /** Empties every lane; returns the waiting deliveries, to give back. */
  drain(): DeliveryTarget[] {
    for (const lane of this.lanes.values()) if (lane.slotTimer) clearTimeout(lane.slotTimer);
    const unsent = [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0).map((w) => w.target));
    this.ready.length = 0;
    this.waiting = 0;
    return unsent;
  }
}
