import type { UsageRepository } from './usage.repository.js';
import { floorHour, HOUR_MS } from './usage-window.js';

/** Hours are rolled up only once they are this far in the past, so late commits land first. */
export const ROLLUP_LAG_MS = 15 * 60_000;

/** Every run also recomputes this many hours before the watermark, picking up rows committed late. */
export const REROLL_HOURS = 2;

/** Hours per statement: a first run over a year of history is a few dozen statements, not one huge one. */
export const CHUNK_HOURS = 7 * 24;

export interface RollupResult {
  from: Date | null;
  rolledUntil: Date;
  chunks: number;
}

/** The usage rollup (the usage worker's job, and the usage bench's). */
export class UsageRollup {
  constructor(private readonly repository: UsageRepository) {}

  /**
   * Recomputes hourly buckets from the watermark less {@link REROLL_HOURS} to the hour holding
   * `now` − {@link ROLLUP_LAG_MS}. Idempotent: buckets are recomputed, never incremented; each chunk
   * commits with its watermark, so an interrupted first run resumes.
   */
  async run(now: Date = new Date()): Promise<RollupResult> {
    let until = floorHour(new Date(now.getTime() - ROLLUP_LAG_MS));
    const rolledUntil = await this.repository.watermark();
    let from: Date | null;
    if (rolledUntil) {
      from = new Date(rolledUntil.getTime() - REROLL_HOURS * HOUR_MS);
      if (until < rolledUntil) until = rolledUntil; // the watermark never moves back
    } else {
      const earliest = await this.repository.earliestActivity();
      from = earliest ? floorHour(earliest) : null;
    }

    let chunks = 0;
    if (from && from < until) {
      for (let start = from; start < until;) {
        const end = new Date(Math.min(start.getTime() + CHUNK_HOURS * HOUR_MS, until.getTime()));
        await this.repository.rollUpHours(start, end);
        chunks++;
        start = end;
      }
    } else {
      await this.repository.advanceWatermark(until);
    }
    return { from: chunks ? from : null, rolledUntil: until, chunks };
  }
}
