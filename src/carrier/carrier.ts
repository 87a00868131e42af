import type { SimulateScript } from '../calls/call.entity.js';

/** What the carrier reports about a call; the engine turns these into status changes. */
export type CarrierReport =
  { kind: 'ringing' } | { kind: 'answered' } | { kind: 'ended'; status: 'completed' | 'no_answer' | 'busy' | 'failed'; durationSeconds: number };

/** A carrier report that is due at a given time (the engine applies it then, durably). */
export interface ScheduledReport {
  report: CarrierReport;
  at: Date;
}

/** The call as the carrier sees it. */
export interface DialRequest {
  callId: string;
  to: string;
  from: string | null;
  /** When the engine handed the call over; a carrier's timeline is counted from here. */
  dialedAt: Date;
  simulate: SimulateScript;
}

/** A text as the carrier sees it. */
export interface TextRequest {
  /** Our id of the text (the message's): a carrier that takes an idempotency key is given this one. */
  reference: string;
  from: string;
  to: string;
  body: string;
}

/** A telephony provider, all engine, numbers and texts depend on; a real one would report through webhooks, not a schedule. */
export interface CarrierAdapter {
  readonly provider: string;
  /** Reserves a number in E.164, near `areaCode` or exactly `requested`; null when unavailable. */
  provisionNumber(options: { areaCode?: string; requested?: string }): Promise<string | null>;
  /** Returns the reports the carrier will make and when, scheduled durably by the engine; idempotent per call. */
  dial(request: DialRequest): Promise<ScheduledReport[]>;
  sendText(text: TextRequest): Promise<void>;
}
