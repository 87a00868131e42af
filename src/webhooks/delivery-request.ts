import { randomUUID } from 'node:crypto';
import { buildBody } from './payload.js';
import { signRinglane, signStandardWebhook } from './verify.js';

/** Headers a customer's `custom_headers` can never replace (compared case-insensitively). */
export const RESERVED_HEADERS = ['content-type', 'x-ringlane-delivery-id', 'x-ringlane-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'];

/** What an attempt needs to know about its delivery, its endpoint and its event. */
export interface DeliveryTarget {
  delivery_id: string;
  attempt_count: number;
  endpoint_id: string;
  url: string;
  secret: string;
  /** The secret before a rotation, while its overlap runs (it signs too, until `previous_secret_expires_at`); else null. */
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
  custom_headers: Record<string, string>;
  payload: Record<string, unknown>;
  /** The delivery's `created_at`, which is its event's: the partition key of both. */
  created_at: Date;
  /**
   * A rate-limited endpoint's delivery: its send slot, in ms after the claim that handed it out
   * ended (negative: the slot began while it ran; see `WebhookDeliveryRepository.claimDue`);
   * null or absent: send at once.
   */
  wait_ms?: number | null;
}

/** One attempt, ready to send: the exact bytes that were signed and the headers carrying the signatures. */
export interface PreparedRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** The value of X-Ringlane-Delivery-Id: new for every attempt. */
  attemptId: string;
  attemptedAt: Date;
}

/**
 * The request headers of one attempt: the customer's, then the reserved ones, which win. With a
 * `previousSecret` (a rotation's overlap), `webhook-signature` carries its signature too, after
 * the current secret's (CONTRACT.md §4); `X-Ringlane-Signature` is the current secret's only.
 */
export function deliveryHeaders(
  target: { custom_headers: Record<string, string>; secret: string; delivery_id: string },
  body: string,
  attemptId: string,
  timestamp: number,
  previousSecret: string | null = null,
) {
  const signers = previousSecret === null ? [target.secret] : [target.secret, previousSecret];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.custom_headers)) {
    if (!RESERVED_HEADERS.includes(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  return {
    ...headers,
    'content-type': 'application/json',
    'user-agent': 'Ringlane-Webhooks/1.0',
    'x-ringlane-delivery-id': attemptId,
    'x-ringlane-signature': signRinglane(body, target.secret),
    'webhook-id': target.delivery_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signers.map((secret) => signStandardWebhook(target.delivery_id, timestamp, body, secret)).join(' '),
  };
}

/**
 * Stage 1, prepare: the body (SPEC.md §6.1 fields → field_aliases → extra_payload), serialized
 * once, and the headers signing exactly those bytes, with a fresh attempt id. The previous
 * secret of a rotation signs too when the attempt is made before it expires.
 */
export function prepareRequest(target: DeliveryTarget, now = new Date()): PreparedRequest {
  const body = buildBody(target.payload, target);
  const attemptId = randomUUID();
  const overlapRuns = target.previous_secret !== null && target.previous_secret_expires_at !== null && now < target.previous_secret_expires_at;
  const headers = deliveryHeaders(target, body, attemptId, Math.floor(now.getTime() / 1000), overlapRuns ? target.previous_secret : null);
  return { url: target.url, body, headers, attemptId, attemptedAt: now };
}
