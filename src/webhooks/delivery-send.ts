import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got from 'got';
import type { PreparedRequest } from './delivery-request.js';
import { RefusedAddressError, resolveDestination } from './ssrf.js';

/** Response body bytes kept (the `response_body` column's length). */
const BODY_KEPT = 1024;
/** How long a host's SSRF-checked address is reused. */
const RESOLVED_FOR_MS = 30_000;

/** Stage 2's outcome; sending never throws. */
export type SendResult =
  | { kind: 'accepted'; status: number; body: string; durationMs: number }
  | { kind: 'rejected'; status: number; body: string; retryAfter: string | undefined; durationMs: number }
  | { kind: 'timeout'; durationMs: number }
  | { kind: 'connection_error'; error: string; durationMs: number }
  /** The SSRF guard refused the destination; nothing was sent. */
  | { kind: 'refused'; error: string; durationMs: number };

export interface SendSettings {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

/**
 * Sends attempts to the SSRF-checked address; got never retries (the delivery path owns retries).
 * Checks are cached briefly so a busy endpoint does not cost a DNS lookup per delivery.
 */
export class DeliverySender {
  private readonly resolved = new Map<string, { at: number; destination: Promise<{ address: string; family: 4 | 6 }> }>();
  private readonly client;

  constructor(private readonly settings: SendSettings) {
    this.client = got.extend({
      method: 'POST',
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      // Only the first KB of an answer is kept: asking for it compressed would cost a zlib stream per attempt.
      decompress: false,
      timeout: { request: settings.timeoutMs },
      agent: { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) },
    });
  }

  private destination(host: string) {
    const cached = this.resolved.get(host);
    if (cached && Date.now() - cached.at < RESOLVED_FOR_MS) return cached.destination;
    const destination = resolveDestination(host, this.settings.allowPrivateNetworks);
    this.resolved.set(host, { at: Date.now(), destination });
    // A failed lookup is not kept: the next attempt asks again.
    destination.catch(() => this.resolved.delete(host));
    return destination;
  }

  /** Stage 2, send: one POST. */
  async send(request: PreparedRequest): Promise<SendResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    let destination: { address: string; family: 4 | 6 };
    try {
      destination = await this.destination(new URL(request.url).hostname);
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      return err instanceof RefusedAddressError
        ? { kind: 'refused', error: message, durationMs: took() }
        : { kind: 'connection_error', error: message, durationMs: took() };
    }
    try {
      const response = await this.client(request.url, {
        body: request.body,
        headers: request.headers,
        // Connect to the address checked above, not to whatever DNS says a moment later.
        dnsLookup: (_host: string, options: unknown, callback?: unknown) => {
          const cb = (typeof options === 'function' ? options : callback) as (err: null, address: string, family: number) => void;
          cb(null, destination.address, destination.family);
        },
      });
      const body = String(response.body).slice(0, BODY_KEPT);
      if (response.statusCode >= 200 && response.statusCode < 300) return { kind: 'accepted', status: response.statusCode, body, durationMs: took() };
      const retryAfter = response.headers['retry-after'];
      return { kind: 'rejected', status: response.statusCode, body, retryAfter, durationMs: took() };
    } catch (err) {
      if ((err as { name?: string }).name === 'TimeoutError') return { kind: 'timeout', durationMs: took() };
      return { kind: 'connection_error', error: (err as Error).message.slice(0, 500), durationMs: took() };
    }
  }
}
