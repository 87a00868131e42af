import { randomUUID } from 'node:crypto';
import { buildBody } from './payload.js';
import { signRinglane, signStandardWebhook } from './verify.js';

/** Headers a customer's `custom_headers` can never replace (compared case-insensitively). */
export const RESERVED_HEADERS = [
  'content-type',
  'x-ringlane-delivery-id',
  'x-ringlane-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'user-agent',
  'x-ringlane-tenant-id',
  // The delivery's span (docs/operations.md#tracing): sent only while tracing is on, never a customer's.
  'traceparent',
  'tracestate',
];

/** What an attempt needs from its delivery, endpoint and event. */
export interface DeliveryTarget {
  delivery_id: string;
  attempt_count: number;
  endpoint_id: string;
  url: string;
  secret: string;
  /** The pre-rotation secret; signs too until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
  custom_headers: Record<string, string>;
  payload: Record<string, unknown>;
  /** The tenant whose event it is (sent as X-Ringlane-Tenant-Id); null for an organization that is not a tenant. */
  tenant_id: string | null;
  /** The partition key (the event's `created_at`). */
  created_at: Date;
  /** The event's call's trace (W3C traceparent), while tracing was on when the call was placed. */
  trace_parent?: string | null;
  /** Send slot in ms after the claim statement ended (may be negative); null/absent: at once. */
  wait_ms?: number | null;
}

/** One attempt, ready to send: `body` is the exact bytes signed. */
export interface PreparedRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** X-Ringlane-Delivery-Id: new for every attempt. */
  attemptId: string;
  attemptedAt: Date;
}

/**
 * Custom headers, then the reserved ones, which win. A `previousSecret` adds its signature to
 * `webhook-signature` only, after the current one's (CONTRACT.md §4). A tenant's event, to
 * whichever endpoint, names its tenant in X-Ringlane-Tenant-Id; no other event has it, whatever
 * `custom_headers` say (CONTRACT.md §5).
 */
export function deliveryHeaders(
  target: Pick<DeliveryTarget, 'custom_headers' | 'secret' | 'delivery_id' | 'tenant_id'>,
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
    ...(target.tenant_id === null ? {} : { 'x-ringlane-tenant-id': target.tenant_id }),
  };
}

/** Stage 1, prepare: the body serialized once, and headers signing exactly those bytes. */
export function prepareRequest(target: DeliveryTarget, now = new Date()): PreparedRequest {
  const body = buildBody(target.payload, target);
  const attemptId = randomUUID();
  const overlapRuns = target.previous_secret !== null && target.previous_secret_expires_at !== null && now < target.previous_secret_expires_at;
  const headers = deliveryHeaders(target, body, attemptId, Math.floor(now.getTime() / 1000), overlapRuns ? target.previous_secret : null);
  return { url: target.url, body, headers, attemptId, attemptedAt: now };
}
