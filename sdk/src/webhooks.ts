import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './events.js';

/** Default largest distance between `webhook-timestamp` and the receiver's clock, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const RINGLANE_PREFIX = 'sha256=';
const STANDARD_SECRET_PREFIX = 'whsec_';
const SHA256_BYTES = 32;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const UNIX_SECONDS = /^\d{1,15}$/;

/** The two ways a delivery is signed (docs/webhooks.md, "Verifying a delivery"). */
export type WebhookScheme = 'standard-webhooks' | 'ringlane';

/** Why a delivery was refused. */
export type WebhookVerificationReason = 'missing_signature' | 'invalid_signature' | 'timestamp_out_of_tolerance' | 'invalid_secret' | 'invalid_body';

/** A delivery that does not verify: answer it with 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/** Headers as Node's `req.headers`, a fetch `Headers`, or a plain object (any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `webhook-timestamp` and `now`, past or future, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock. Default: now. */
  now?: Date;
  /**
   * The schemes accepted. Default both: the Standard Webhooks headers when the delivery has them,
   * else `X-Ringlane-Signature`. `['standard-webhooks']` refuses a delivery without a timestamp,
   * so a captured delivery cannot be replayed later with the other header alone.
   */
  schemes?: readonly WebhookScheme[];
}

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== name) continue;
    // A repeated header is not something Ringlane sends: refuse rather than pick one.
    return typeof value === 'string' ? value : null;
  }
  return null;
}

const bytesOf = (body: string | Uint8Array): Buffer =>
  typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

const hmac = (key: Buffer, ...parts: Buffer[]): Buffer => {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

/** Canonical base64 (padding optional), else null: stray bits and misplaced padding are refused. */
function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64').replace(/=+$/, '') === text.replace(/=+$/, '') ? bytes : null;
}

/** The Standard Webhooks key: the base64 after `whsec_`, else the secret's UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return Buffer.from(secret, 'utf8');
  const key = decodeBase64(secret.slice(STANDARD_SECRET_PREFIX.length));
  if (!key || key.length === 0) throw new WebhookVerificationError('invalid_secret', 'A whsec_ secret must be followed by base64.');
  return key;
}

/** Compares every candidate with every expected value, so the time taken does not tell which matched. */
function anyMatch(given: Buffer[], expected: Buffer[]): boolean {
  let matched = false;
  for (const candidate of given) {
    for (const value of expected) {
      if (candidate.length === value.length && timingSafeEqual(candidate, value)) matched = true;
    }
  }
  return matched;
}

function verifyStandard(body: Buffer, headers: WebhookHeaders, secrets: string[], toleranceSeconds: number, now: Date): void {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing_signature', 'webhook-id, webhook-timestamp and webhook-signature are all needed.');
  if (!UNIX_SECONDS.test(timestamp)) throw new WebhookVerificationError('invalid_signature', 'webhook-timestamp is not Unix seconds.');
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `webhook-timestamp is more than ${toleranceSeconds} s from now.`);
  }
  const signed = Buffer.from(`${id}.${timestamp}.`, 'utf8');
  const expected = secrets.map((secret) => hmac(standardKey(secret), signed, body));
  // During a secret rotation there are two, space-separated: the new secret's, then the previous one's.
  const given = signatures
    .split(' ')
    .map((entry) => entry.split(','))
    .filter((parts) => parts.length === 2 && parts[0] === 'v1')
    .map((parts) => decodeBase64(parts[1]))
    .filter((bytes): bytes is Buffer => bytes !== null && bytes.length === SHA256_BYTES);
  if (!anyMatch(given, expected)) throw new WebhookVerificationError('invalid_signature', 'No webhook-signature matches.');
}

function verifyRinglane(body: Buffer, signature: string, secrets: string[]): void {
  const hex = signature.trim().startsWith(RINGLANE_PREFIX) ? signature.trim().slice(RINGLANE_PREFIX.length) : '';
  const given = HEX_SHA256.test(hex) ? [Buffer.from(hex, 'hex')] : [];
  // Keyed by the secret's UTF-8 bytes as they are, `whsec_` secrets included.
  const expected = secrets.map((secret) => hmac(Buffer.from(secret, 'utf8'), body));
  if (!anyMatch(given, expected)) throw new WebhookVerificationError('invalid_signature', 'X-Ringlane-Signature does not match.');
}

/**
 * Verifies a webhook delivery and returns its event; throws a `WebhookVerificationError` otherwise.
 *
 * - `rawBody`: the exact bytes received, before any JSON parsing (Express: `express.raw()`).
 * - `headers`: the request's headers. The Standard Webhooks headers (`webhook-id`,
 *   `webhook-timestamp`, `webhook-signature`) are checked when present, with the timestamp
 *   tolerance; else `X-Ringlane-Signature`.
 * - `secret`: the endpoint's secret, or several: during a rotation give the new and the old one,
 *   and a delivery verifying with either is accepted.
 *
 * Signatures are compared in constant time.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = new Date(), schemes = ['standard-webhooks', 'ringlane'] } = options;
  const secrets = (typeof secret === 'string' ? [secret] : [...secret]).filter((s) => typeof s === 'string' && s.length > 0);
  if (secrets.length === 0) throw new WebhookVerificationError('invalid_secret', 'No secret to verify with.');
  if (!(toleranceSeconds >= 0)) throw new RangeError('toleranceSeconds must be 0 or more.');
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError('rawBody must be the raw request body (a Buffer, Uint8Array or string), not parsed JSON.');
  }
  const body = bytesOf(rawBody);
  const ringlaneSignature = header(headers, 'x-ringlane-signature');
  if (schemes.includes('standard-webhooks') && header(headers, 'webhook-signature') !== null) {
    verifyStandard(body, headers, secrets, toleranceSeconds, now);
  } else if (schemes.includes('ringlane') && ringlaneSignature !== null) {
    verifyRinglane(body, ringlaneSignature, secrets);
  } else {
    throw new WebhookVerificationError('missing_signature', `No signature header of the accepted schemes (${schemes.join(', ')}).`);
  }
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The body is not JSON.');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw new WebhookVerificationError('invalid_body', 'The body is not a JSON object.');
  return event as WebhookEvent;
}
