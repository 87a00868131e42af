import { backoffMs, MAX_RETRY_DELAY_MS, parseRetryAfter } from './backoff.js';
import type { SendResult } from './delivery-send.js';

export interface RetryPolicy {
  maxAttempts: number;
  backoffBaseMs: number;
  /** The attempt timeout: after a timeout, the next attempt waits at least this long. */
  timeoutMs: number;
}

/** What becomes of the delivery after an attempt. */
export type Decision = { status: 'succeeded' } | { status: 'retrying'; retryInMs: number } | { status: 'failed'; reason: 'attempts_used_up' | 'gone' };

/** What the attempt record says of an answer (null for an accepted one). */
export function attemptError(result: SendResult): string | null {
  switch (result.kind) {
    case 'accepted':
      return null;
    case 'rejected':
      if (result.status === 410) return 'HTTP 410 Gone: the endpoint is disabled';
      return `HTTP ${result.status}${result.status >= 300 && result.status < 400 ? ' (redirects are not followed)' : ''}`;
    case 'timeout':
      return `timeout after ${result.durationMs} ms`;
    case 'connection_error':
    case 'refused':
      return result.error;
  }
}

/**
 * Stage 3, decide, after attempt `attempt` (1-based). 410 Gone fails at once and disables the
 * endpoint (Standard Webhooks: it will never take these again). A timeout waits at least one
 * timeout: a receiver too slow to answer is not helped by a quick second try.
 */
export function decide(result: SendResult, attempt: number, policy: RetryPolicy, random: () => number = Math.random, now = Date.now()): Decision {
  if (result.kind === 'accepted') return { status: 'succeeded' };
  if (result.kind === 'rejected' && result.status === 410) return { status: 'failed', reason: 'gone' };
  if (attempt >= policy.maxAttempts) return { status: 'failed', reason: 'attempts_used_up' };
  const backoff = backoffMs(attempt, policy.backoffBaseMs, random);
  if (result.kind === 'rejected' && (result.status === 429 || result.status === 503)) {
    const asked = parseRetryAfter(result.retryAfter, now);
    if (asked !== null) return { status: 'retrying', retryInMs: Math.min(MAX_RETRY_DELAY_MS, Math.max(policy.backoffBaseMs, asked)) };
  }
  if (result.kind === 'timeout') return { status: 'retrying', retryInMs: Math.min(MAX_RETRY_DELAY_MS, Math.max(backoff, policy.timeoutMs)) };
  return { status: 'retrying', retryInMs: backoff };
}
