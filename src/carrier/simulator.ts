import { randomInt } from 'node:crypto';
import { config } from '../config.js';
import { logger } from '../lib/logger.js';
import type { CarrierAdapter, DialRequest, ScheduledReport, TextRequest } from './carrier.js';

/** The simulated carrier; its timeline is a pure function of the dial time, so a replayed dial schedules the same reports. */
export class SimulatorCarrier implements CarrierAdapter {
  readonly provider = 'simulator';

  constructor(private readonly timing = config.sim) {}

  async provisionNumber({ areaCode, requested }: { areaCode?: string; requested?: string }): Promise<string | null> {
    if (requested) return requested;
    const area = areaCode ?? String(200 + randomInt(800));
    return `+1${area}555${String(randomInt(10_000)).padStart(4, '0')}`;
  }

  async dial({ dialedAt, simulate }: DialRequest): Promise<ScheduledReport[]> {
    const t0 = dialedAt.getTime();
    const at = (ms: number) => new Date(t0 + Math.round(ms));
    if (simulate.answer === 'busy') return [{ report: { kind: 'ended', status: 'busy', durationSeconds: 0 }, at: at(0) }];
    const ring = { report: { kind: 'ringing' as const }, at: at(0) };
    if (simulate.answer === false) {
      return [ring, { report: { kind: 'ended', status: 'no_answer', durationSeconds: 0 }, at: at(this.timing.ringMs) }];
    }
    const answeredAt = this.timing.ringMs;
    const endedAt = answeredAt + simulate.duration_seconds * this.timing.secondMs;
    return [
      ring,
      { report: { kind: 'answered' }, at: at(answeredAt) },
      { report: { kind: 'ended', status: 'completed', durationSeconds: simulate.duration_seconds }, at: at(endedAt) },
    ];
  }

  async sendText({ reference }: TextRequest): Promise<void> {
    // This log line is the carrier's record of the send.
    logger.info({ reference }, 'simulator: text delivered');
  }
}
