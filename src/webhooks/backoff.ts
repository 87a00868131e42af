/** The longest a retry waits, whatever the base or a receiver's Retry-After. */
export const MAX_RETRY_DELAY_MS = 6 * 3600_000;

/** Wait before attempt `attempt + 1`: `baseMs` × 2^(attempt-1), ±20% jitter so many retries spread out, capped. */
export function backoffMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.min(MAX_RETRY_DELAY_MS, Math.round(exponential * (0.8 + 0.4 * random())));
}

/** `Retry-After` as milliseconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
