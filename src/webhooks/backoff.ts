/** The longest a retry waits, whatever the base or a receiver's Retry-After. */
export const MAX_RETRY_DELAY_MS = 6 * 3600_000;

/**
 * The wait before attempt `attempt + 1`, after `attempt` failed attempts: exponential from
 * `baseMs` (base, 2×, 4×, ...) with ±20% jitter so retries of many deliveries spread out,
 * capped at MAX_RETRY_DELAY_MS. A receiver's `Retry-After` (seconds or an HTTP date) is
 * honoured when it falls between the base and the cap.
 */
export function retryDelayMs(attempt: number, baseMs: number, retryAfter?: string, random: () => number = Math.random, now = Date.now()): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(exponential * (0.8 + 0.4 * random()));
  const asked = parseRetryAfter(retryAfter, now);
  if (asked !== null && asked >= baseMs && asked <= MAX_RETRY_DELAY_MS) return asked;
  return Math.min(MAX_RETRY_DELAY_MS, jittered);
}

/** `Retry-After` as milliseconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
