import { randomUUID } from 'node:crypto';
import got, { type Response } from 'got';
import type { DataSource } from 'typeorm';
import { config } from '../config.js';
import { logger } from '../lib/logger.js';
import { countWebhookAttempt, observeWebhookLatency } from '../lib/metrics.js';
import { retryDelayMs } from './backoff.js';
import { buildBody } from './payload.js';
import { RefusedAddressError, resolveDestination } from './ssrf.js';
import { signRinglane, signStandardWebhook } from './verify.js';
import type { WebhookJobs } from './webhook.jobs.js';

/** Headers a customer's `custom_headers` can never replace (compared case-insensitively). */
export const RESERVED_HEADERS = ['content-type', 'x-ringlane-delivery-id', 'x-ringlane-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'];

const BODY_KEPT = 1024;

interface Target {
  delivery_id: string;
  status: string;
  attempt_count: number;
  endpoint_id: string;
  url: string;
  secret: string;
  endpoint_disabled: boolean;
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
  custom_headers: Record<string, string>;
  payload: Record<string, unknown>;
  event_created_at: Date;
}

interface Outcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  body: string | null;
  retryAfter?: string;
  result: 'succeeded' | 'failed_status' | 'timeout' | 'connection_error' | 'refused';
}

/** The request headers of one attempt: the customer's, then the reserved ones, which win. */
export function deliveryHeaders(target: { custom_headers: Record<string, string>; secret: string; delivery_id: string }, body: string, attemptId: string, timestamp: number) {
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
    'webhook-signature': signStandardWebhook(target.delivery_id, timestamp, body, target.secret),
  };
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<Outcome> {
  const target = new URL(url);
  let destination;
  try {
    destination = await resolveDestination(target.hostname, config.webhook.allowPrivateNetworks);
  } catch (err) {
    const refused = err instanceof RefusedAddressError;
    return { ok: false, status: null, error: (err as Error).message.slice(0, 500), body: null, result: refused ? 'refused' : 'connection_error' };
  }
  try {
    const response: Response<string> = await got.post(url, {
      body,
      headers,
      timeout: { request: config.webhook.timeoutMs },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      // Connect to the address checked above, not to whatever DNS says a moment later.
      dnsLookup: ((_host: string, options: unknown, callback?: unknown) => {
        const cb = (typeof options === 'function' ? options : callback) as (err: null, address: string, family: number) => void;
        cb(null, destination.address, destination.family);
      }) as never,
    });
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    return {
      ok,
      status: response.statusCode,
      error: ok ? null : `HTTP ${response.statusCode}${response.statusCode >= 300 && response.statusCode < 400 ? ' (redirects are not followed)' : ''}`,
      body: response.body.slice(0, BODY_KEPT),
      retryAfter: response.headers['retry-after'],
      result: ok ? 'succeeded' : 'failed_status',
    };
  } catch (err) {
    const timeout = (err as { name?: string }).name === 'TimeoutError';
    return { ok: false, status: null, error: (timeout ? `timeout after ${config.webhook.timeoutMs} ms` : (err as Error).message).slice(0, 500), body: null, result: timeout ? 'timeout' : 'connection_error' };
  }
}

/**
 * Runs one of the statements every attempt makes as a named prepared statement on the data
 * source's pg pool, so each connection plans it once rather than at every delivery (planning
 * these primary-key statements costs Postgres more than running them). Same rows as
 * `dataSource.query`; falls back to it when the driver has no pg pool.
 */
async function preparedQuery<T>(dataSource: DataSource, name: string, text: string, values: unknown[]): Promise<T[]> {
  const pool = (dataSource.driver as { master?: { query?: unknown } }).master;
  if (pool && typeof pool.query === 'function') {
    const result = await (pool as { query: (config: { name: string; text: string; values: unknown[] }) => Promise<{ rows: T[] }> }).query({ name, text, values });
    return result.rows;
  }
  return dataSource.query(text, values);
}

/**
 * At most `limit` deliveries to one endpoint at a time in this process, so a slow or dead
 * receiver holds a bounded share of the worker and cannot starve the other endpoints.
 */
export class EndpointGate {
  private readonly busy = new Map<string, number>();

  constructor(private readonly limit: number) {}

  tryEnter(endpointId: string): boolean {
    const n = this.busy.get(endpointId) ?? 0;
    if (n >= this.limit) return false;
    this.busy.set(endpointId, n + 1);
    return true;
  }

  leave(endpointId: string): void {
    const n = (this.busy.get(endpointId) ?? 1) - 1;
    if (n <= 0) this.busy.delete(endpointId);
    else this.busy.set(endpointId, n);
  }
}

/** Thrown when the endpoint is at its concurrency limit: the job waits a moment and comes back. */
export class EndpointBusyError extends Error {}

/**
 * One attempt of a delivery: build the body once, sign those exact bytes, POST with a fresh
 * delivery id, record the attempt and the delivery's new state in one transaction, and
 * schedule the next attempt with backoff (or give up: `failed`). A job that runs again for an
 * attempt already made does nothing (unless it is a support retry).
 */
export async function attemptDelivery(dataSource: DataSource, jobs: WebhookJobs, gate: EndpointGate, deliveryId: string, manual = false): Promise<void> {
  const [target] = await preparedQuery<Target>(
    dataSource,
    'webhook_delivery_target',
    `SELECT d.id AS delivery_id, d.status, d.attempt_count, w.id AS endpoint_id, w.url, w.secret, w.disabled AS endpoint_disabled,
            w.field_aliases, w.extra_payload, w.custom_headers, ev.payload, ev.created_at AS event_created_at
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN call_events ev ON ev.id = d.event_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  if (!target) return;
  if (!manual && (target.endpoint_disabled || target.status === 'succeeded' || target.status === 'failed')) return;
  if (!gate.tryEnter(target.endpoint_id)) throw new EndpointBusyError(target.endpoint_id);
  try {
    await attempt(dataSource, jobs, target, deliveryId);
  } finally {
    gate.leave(target.endpoint_id);
  }
}

/**
 * Records an accepted attempt in one statement (one round trip instead of a six-statement
 * transaction; this is the path almost every delivery takes): locks the delivery, adds the
 * attempt, marks the delivery succeeded, clears the endpoint's failing streak. Returns
 * whether this was the delivery's first success, or null when the delivery is gone.
 */
async function recordSuccess(
  dataSource: DataSource,
  target: Target,
  deliveryId: string,
  attemptId: string,
  attemptedAt: Date,
  durationMs: number,
  outcome: Outcome,
): Promise<{ retryInMs: null; firstSuccess: boolean } | null> {
  const rows = await preparedQuery<{ previous_status: string }>(
    dataSource,
    'webhook_delivery_succeeded',
    `WITH old AS MATERIALIZED (
       SELECT id, status FROM webhook_deliveries WHERE id = $1 FOR UPDATE
     ), updated AS (
       UPDATE webhook_deliveries d SET status = 'succeeded', attempt_count = d.attempt_count + 1, next_attempt_at = NULL,
              last_response_status = $3::int, updated_at = now()
         FROM old WHERE d.id = old.id
       RETURNING old.status AS previous_status
     ), attempt AS (
       INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body)
       SELECT $4::uuid, old.id, $5::timestamptz, $3::int, $6::int, NULL, $7::varchar FROM old
     ), endpoint AS (
       UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $2 AND failing_since IS NOT NULL AND EXISTS (SELECT 1 FROM old)
     )
     SELECT previous_status FROM updated`,
    [deliveryId, target.endpoint_id, outcome.status, attemptId, attemptedAt, durationMs, outcome.body],
  );
  if (rows.length === 0) return null;
  return { retryInMs: null, firstSuccess: rows[0].previous_status !== 'succeeded' };
}

async function attempt(dataSource: DataSource, jobs: WebhookJobs, target: Target, deliveryId: string): Promise<void> {

  const body = buildBody(target.payload, target);
  const attemptId = randomUUID();
  const attemptedAt = new Date();
  const headers = deliveryHeaders(target, body, attemptId, Math.floor(attemptedAt.getTime() / 1000));
  const outcome = await post(target.url, body, headers);
  const durationMs = Date.now() - attemptedAt.getTime();
  const metrics = countWebhookAttempt(jobs.redis, outcome.result).catch(() => undefined);

  const next = outcome.ok
    ? await recordSuccess(dataSource, target, deliveryId, attemptId, attemptedAt, durationMs, outcome)
    : await dataSource.transaction(async (em) => {
        const [row] = await em.query('SELECT attempt_count, status FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
        if (!row) return null;
        const attempts = row.attempt_count + 1;
        await em.query(
          `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [attemptId, deliveryId, attemptedAt, outcome.status, durationMs, outcome.error, outcome.body],
        );
        const exhausted = attempts >= config.webhook.maxAttempts;
        const retryInMs = exhausted ? null : retryDelayMs(attempts, config.webhook.backoffBaseMs, outcome.retryAfter);
        await em.query(
          `UPDATE webhook_deliveries SET status = $2, attempt_count = $3, next_attempt_at = $4, last_response_status = $5, updated_at = now() WHERE id = $1`,
          [deliveryId, exhausted ? 'failed' : 'retrying', attempts, retryInMs === null ? null : new Date(Date.now() + retryInMs), outcome.status],
        );
        // An endpoint failing everything for WEBHOOK_DISABLE_AFTER_HOURS is switched off.
        await em.query(
          `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2),
                  disabled = disabled OR COALESCE(failing_since, $2) <= $2 - make_interval(secs => $3)
            WHERE id = $1`,
          [target.endpoint_id, attemptedAt, config.webhook.disableAfterHours * 3600],
        );
        return { retryInMs, attempts, firstSuccess: false };
      });
  if (!next) return;
  await metrics;
  if (outcome.ok && next.firstSuccess) {
    const seconds = (Date.now() - new Date(target.event_created_at).getTime()) / 1000;
    await observeWebhookLatency(jobs.redis, seconds).catch(() => undefined);
  }
  if (next.retryInMs !== null && 'attempts' in next) {
    await jobs.deliver([{ deliveryId, attempt: next.attempts! + 1, delayMs: next.retryInMs }]);
  }
  logger.debug({ deliveryId, result: outcome.result, status: outcome.status }, 'webhook attempt');
}
