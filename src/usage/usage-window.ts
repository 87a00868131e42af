import { AppError } from '../lib/errors.js';
import { parseUtcTimestamp } from '../lib/time.js';

/** SPEC.md §8: a usage window spans at most 366 days. */
export const MAX_WINDOW_DAYS = 366;

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** 400 `invalid_window` (CONTRACT.md "Usage"): a bad `since`/`until`, or a window that is empty or too long. */
export class InvalidWindowError extends AppError {
  constructor(message: string) {
    super(400, 'invalid_window', message);
  }
}

/** A half-open window of time: `since` ≤ t < `until`. */
export interface UsageWindow {
  since: Date;
  until: Date;
}

function monthStart(year: number, monthIndex: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, 1); // not Date.UTC, which reads the years 0-99 as 1900-1999
  return date;
}

/** The first instant of the UTC calendar month containing `at`. */
export const startOfUtcMonth = (at: Date): Date => monthStart(at.getUTCFullYear(), at.getUTCMonth());

/** The first instant of the UTC calendar month after the one containing `at`. */
export const startOfNextUtcMonth = (at: Date): Date => monthStart(at.getUTCFullYear(), at.getUTCMonth() + 1);

/** The start of the UTC hour containing `at`. */
export const floorHour = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

/** `at` if it starts a UTC hour, else the start of the next hour. */
export const ceilHour = (at: Date): Date => new Date(Math.ceil(at.getTime() / HOUR_MS) * HOUR_MS);

/** The error of a `since` or `until` that is not a time (src/http/schemas.ts `timeInput`). */
export const invalidBound = (name: string) => new InvalidWindowError(`${name} must be an ISO 8601 UTC timestamp ending in Z, such as 2026-11-01T00:00:00Z.`);

function parseBound(name: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  const parsed = parseUtcTimestamp(value);
  if (!parsed) throw invalidBound(name);
  return parsed;
}

/**
 * Neither bound: the current UTC month; `since` alone: up to `now`; `until` alone: from the start of the
 * month holding the instant before it. `until` ≤ `since` or over 366 days: 400 `invalid_window`.
 */
export function resolveUsageWindow(query: { since?: unknown; until?: unknown }, now: Date = new Date()): UsageWindow {
  const since = parseBound('since', query.since);
  const until = parseBound('until', query.until);
  let window: UsageWindow;
  if (since && until) window = { since, until };
  else if (since) window = { since, until: now };
  else if (until) window = { since: startOfUtcMonth(new Date(until.getTime() - 1)), until };
  else window = { since: startOfUtcMonth(now), until: startOfNextUtcMonth(now) };

  if (window.until.getTime() <= window.since.getTime()) {
    throw new InvalidWindowError(until ? 'until must be after since.' : 'since is not in the past: without until, the window ends now.');
  }
  if (window.until.getTime() - window.since.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new InvalidWindowError(`A usage window spans at most ${MAX_WINDOW_DAYS} days.`);
  }
  return window;
}

/** A half-open time range [from, to), as Dates for the query. */
export type Range = [Date, Date];

/**
 * A window as usage reads it: `rolled`, the whole hours below the rollup watermark (from
 * usage_buckets); `raw`, at most two ranges, read from the sources. Together they cover the window once.
 */
export interface WindowParts {
  rolled: Range | null;
  raw: Range[];
}

/**
 * The parts of `window` (see WindowParts). Any watermark ever written is safe: it only moves forward
 * and buckets below it stay complete, so a stale one only shifts work to `raw`.
 */
export function splitWindow(window: UsageWindow, rolledUntil: Date | null): WindowParts {
  const wholeFrom = ceilHour(window.since);
  if (!rolledUntil) return { rolled: null, raw: [[window.since, window.until]] };
  const wholeTo = new Date(Math.min(floorHour(window.until).getTime(), floorHour(rolledUntil).getTime()));
  if (wholeTo <= wholeFrom) return { rolled: null, raw: [[window.since, window.until]] };
  const raw: Range[] = [];
  if (window.since < wholeFrom) raw.push([window.since, wholeFrom]);
  if (wholeTo < window.until) raw.push([wholeTo, window.until]);
  return { rolled: [wholeFrom, wholeTo], raw };
}
