/**
 * Signing (`sign*`, the delivery worker) and verifying (`verify*`, receivers) Ringlane webhooks;
 * see docs/webhooks.md#verifying-a-delivery. Imports only `node:crypto`, so receivers can copy it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** `X-Ringlane-Signature` is this prefix, then 64 hex digits. */
export const RINGLANE_SIGNATURE_PREFIX = 'sha256=';
/** A secret of this form holds a base64 key (Standard Webhooks). */
export const STANDARD_WEBHOOKS_SECRET_PREFIX = 'whsec_';
/** Default allowed skew of `webhook-timestamp`, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SHA256_BYTES = 32;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const UNIX_SECONDS = /^\d{1,15}$/;

export type RawBody = Buffer | Uint8Array | string;

/** Node's `req.headers` fits as it is. */
export interface StandardWebhookHeaders {
  'webhook-id'?: string | string[];
  'webhook-timestamp'?: string | string[];
  'webhook-signature'?: string | string[];
  [name: string]: string | string[] | undefined;
}

export interface StandardWebhookOptions {
  /** Largest accepted distance between `webhook-timestamp` and `now`, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock, in milliseconds since the epoch. Default `Date.now()`. */
  now?: number;
}

const bytesOf = (body: RawBody): Buffer => (typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength));

const hmac = (key: Buffer | string, ...parts: Buffer[]): Buffer => {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

/** Decodes canonical base64 (padding optional); null otherwise. */
function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text) || text.length % 4 === 1) return null;
  const bytes = Buffer.from(text, 'base64');
  // Re-encoding must give the text back: refuses stray bits and misplaced padding.
  return bytes.toString('base64').replace(/=+$/, '') === text.replace(/=+$/, '') ? bytes : null;
}

/** Standard Webhooks HMAC key: base64-decoded after `whsec_`, else the UTF-8 bytes; null for a bad `whsec_` secret. */
export function standardWebhookKey(secret: string): Buffer | null {
  if (typeof secret !== 'string' || secret.length === 0) return null;
  if (!secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX)) return Buffer.from(secret, 'utf8');
  const key = decodeBase64(secret.slice(STANDARD_WEBHOOKS_SECRET_PREFIX.length));
  return key && key.length > 0 ? key : null;
}

/** `X-Ringlane-Signature`: `sha256=<hex HMAC-SHA256 of the raw body, keyed by the secret's UTF-8>`. */
export function signRinglane(body: RawBody, secret: string): string {
  return RINGLANE_SIGNATURE_PREFIX + hmac(Buffer.from(secret, 'utf8'), bytesOf(body)).toString('hex');
}

/** `webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. Throws on a `whsec_` secret without valid base64. */
export function signStandardWebhook(id: string, timestamp: number | string, body: RawBody, secret: string): string {
  const key = standardWebhookKey(secret);
  if (!key) throw new TypeError('The secret is not usable for Standard Webhooks signatures (whsec_ must be followed by base64).');
  return `v1,${standardSignature(key, id, String(timestamp), bytesOf(body)).toString('base64')}`;
}

function standardSignature(key: Buffer, id: string, timestamp: string, body: Buffer): Buffer {
  return hmac(key, Buffer.from(`${id}.${timestamp}.`, 'utf8'), body);
}

/**
 * True when `signatureHeader` (`X-Ringlane-Signature`) is `sha256=` + hex HMAC-SHA256 of `rawBody`
 * keyed by `secret`. Pass the exact bytes received, before JSON parsing. Constant-time; false on
 * malformed input, never throws.
 */
export function verifyRinglaneSignature(rawBody: Buffer | string, signatureHeader: string | undefined, secret: string): boolean {
  try {
    if (typeof signatureHeader !== 'string' || typeof secret !== 'string' || secret.length === 0) return false;
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
    const header = signatureHeader.trim();
    if (!header.startsWith(RINGLANE_SIGNATURE_PREFIX)) return false;
    const hex = header.slice(RINGLANE_SIGNATURE_PREFIX.length);
    if (!HEX_SHA256.test(hex)) return false;
    const given = Buffer.from(hex, 'hex');
    const expected = hmac(Buffer.from(secret, 'utf8'), bytesOf(rawBody));
    return given.length === expected.length && timingSafeEqual(given, expected);
  } catch {
    return false;
  }
}

const single = (value: string | string[] | undefined): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/**
 * True when `webhook-timestamp` is within `toleranceSeconds` of `now`, past or future (replay
 * protection), and a `v1,` signature in `webhook-signature` matches `{id}.{timestamp}.{rawBody}`.
 * Constant-time; false on malformed input, never throws. Deduplicate on `webhook-id` (the same on
 * every attempt of a delivery).
 */
export function verifyStandardWebhook(
  rawBody: Buffer | string,
  headers: StandardWebhookHeaders,
  secret: string,
  { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = Date.now() }: StandardWebhookOptions = {},
): boolean {
  try {
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
    if (headers === null || typeof headers !== 'object') return false;
    const id = single(headers['webhook-id']);
    const timestamp = single(headers['webhook-timestamp']);
    const signatures = single(headers['webhook-signature']);
    if (!id || !timestamp || !signatures || !UNIX_SECONDS.test(timestamp)) return false;
    if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0 || !Number.isFinite(now)) return false;
    if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return false;
    const key = standardWebhookKey(secret);
    if (!key) return false;
    const expected = standardSignature(key, id, timestamp, bytesOf(rawBody));
    let matched = false;
    for (const entry of signatures.split(' ')) {
      const [version, value, ...rest] = entry.split(',');
      if (version !== 'v1' || value === undefined || rest.length > 0) continue;
      const given = decodeBase64(value);
      // Every candidate is compared, so the time taken does not tell which one matched.
      if (given && given.length === SHA256_BYTES && timingSafeEqual(given, expected)) matched = true;
    }
    return matched;
  } catch {
    return false;
  }
}
