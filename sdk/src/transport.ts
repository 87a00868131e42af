import { randomUUID } from 'node:crypto';
import { RinglaneConnectionError, RinglaneError } from './errors.js';
import { PagePromise, type Page } from './pagination.js';

/** CONTRACT: an `Idempotency-Key` holds at most 255 characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** A `Retry-After` longer than this is not waited for: the error is thrown at once (the API key creation limit answers up to an hour). */
export const MAX_RETRY_AFTER_MS = 60_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

/** Options of one request; each one overrides the client's. */
export interface RequestOptions {
  /** Acts inside this tenant (`X-Tenant-Id`); `null` acts as the account itself, also on a client from `forTenant`. */
  tenantId?: string | null;
  /** The `Idempotency-Key` of a `POST` (at most 255 characters); by default a new UUID per call, the same on each of its retries. */
  idempotencyKey?: string;
  /** How long one attempt may take, in milliseconds; a timed-out attempt counts as a network error. */
  timeoutMs?: number;
  /** Retries after a network error, a timeout, 429, 502, 503, 504 or 409 `idempotency_key_in_use`. */
  maxRetries?: number;
  /** Aborts the request, its retries and the waits between them. */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/** What the client was created with, as the transport needs it. */
export interface TransportSettings {
  baseUrl: string;
  apiKey: string | undefined;
  tenantId: string | null;
  timeoutMs: number;
  maxRetries: number;
  headers: Record<string, string>;
}

/** One operation's request, as the generated resource methods describe it. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: object;
  body?: unknown;
  /** false for the routes that take no credential (`POST /v1/sessions`). */
  authenticated?: boolean;
  /** false for the routes that do not take `X-Tenant-Id`. */
  tenantHeader?: boolean;
  /** true for the routes that take an `Idempotency-Key`. */
  idempotencyKey?: boolean;
  accept?: 'application/json' | 'text/csv';
}

/** A path parameter as one URL segment. */
export const encodePathSegment = (value: string) => encodeURIComponent(value);

function queryString(query: object | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The wait before retry number `retry` (0 for the first): exponential, capped, half of it random so that clients spread out. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return ceiling / 2 + random() * (ceiling / 2);
}

/** `Retry-After` as milliseconds: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date begins with the day's name ("Tue, 24 Nov 2026 15:00:30 GMT"): '-1' is no date.
  const at = /^[A-Za-z]/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** How long to wait before retrying an error answer, or null when it is not retried. */
function retryDelay(error: RinglaneError, retry: number): number | null {
  const retryAfter = retryAfterMs(error.headers.get('retry-after'));
  if (retryAfter !== null && retryAfter > MAX_RETRY_AFTER_MS) return null;
  // A retry after a lost answer can meet the first attempt still running: it answers once that one ends.
  if (error.status === 429 || error.status === 503 || (error.status === 409 && error.code === 'idempotency_key_in_use')) return retryAfter ?? backoffMs(retry);
  if (error.status === 502 || error.status === 504) return backoffMs(retry);
  return null;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

async function bodyOf(response: Response, accept: ApiRequest['accept']): Promise<unknown> {
  const text = await response.text();
  if (accept === 'text/csv') return text;
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * Sends the requests of one client: authentication, tenant scope, an `Idempotency-Key` per
 * logical `POST`, a timeout per attempt, and retries with backoff (docs in sdk/README.md).
 */
export class Transport {
  // Private by the language, not the type: logging a client (console.log, util.inspect) never shows the API key.
  readonly #settings: TransportSettings;

  constructor(settings: TransportSettings) {
    this.#settings = settings;
  }

  async request<T>(request: ApiRequest, options: RequestOptions = {}): Promise<T> {
    const settings = this.#settings;
    const idempotencyKey = request.idempotencyKey ? (options.idempotencyKey ?? randomUUID()) : undefined;
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      throw new RangeError(`An Idempotency-Key holds 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
    }
    const tenantId = options.tenantId === undefined ? settings.tenantId : options.tenantId;
    const headers: Record<string, string> = { accept: request.accept ?? 'application/json', ...settings.headers, ...options.headers };
    if (request.authenticated !== false && settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
    if (request.tenantHeader !== false && tenantId) headers['x-tenant-id'] = tenantId;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const url = `${settings.baseUrl.replace(/\/+$/, '')}${request.path}${queryString(request.query)}`;
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const maxRetries = options.maxRetries ?? settings.maxRetries;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs;

    for (let retry = 0; ; retry++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let response: Response;
      let result: unknown;
      try {
        response = await fetch(url, { method: request.method, headers, body, signal });
        // The body is read inside the same try: an answer cut off midway is a network error too.
        result = response.ok ? await bodyOf(response, request.accept) : await response.text();
      } catch (cause) {
        // The caller's own abort ends everything; anything else is the network or the timeout.
        if (options.signal?.aborted) throw options.signal.reason;
        if (retry >= maxRetries) throw new RinglaneConnectionError(request.method, request.path, timeout.aborted, cause);
        await sleep(backoffMs(retry), options.signal);
        continue;
      }
      if (response.ok) return result as T;
      const error = RinglaneError.fromResponse(response, result as string);
      const delay = retry < maxRetries ? retryDelay(error, retry) : null;
      if (delay === null) throw error;
      await sleep(delay, options.signal);
    }
  }

  /** A paginated GET: awaitable for its first page, async-iterable over every item (following `next_cursor`). */
  list<T>(request: ApiRequest, options: RequestOptions = {}): PagePromise<T> {
    const query = (request.query ?? {}) as { cursor?: string };
    return new PagePromise<T>((cursor) => this.request<Page<T>>({ ...request, query: { ...query, cursor } }, options), query.cursor);
  }
}
