/**
 * A time as the API takes it (CONTRACT.md §2 "Times"): ISO 8601 UTC with `Z`,
 * `YYYY-MM-DDTHH:MM:SS`, optionally with 1 to 9 fractional digits. Years 0001 to 9999: a
 * time Postgres can store and JavaScript can write back in the same form.
 */
export const UTC_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Parses an ISO 8601 UTC timestamp ending in `Z` (no other offset, no date-only form, a real
 * calendar date) or returns null. Digits below the millisecond round up to the next
 * millisecond: times are stored to the millisecond, so a bound rounded up selects exactly the
 * same rows.
 */
export function parseUtcTimestamp(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  const m = UTC_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const fraction = (m[7] ?? '').padEnd(9, '0');
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads the years 0-99 as 1900-1999
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  const micro = Number(fraction.slice(3));
  const ms = date.getTime() + Number(fraction.slice(0, 3)) + (micro > 0 ? 1 : 0);
  return ms > LATEST ? null : new Date(ms);
}
