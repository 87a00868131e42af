/**
 * A stretch of history by its partition key (the event's `created_at`), both ends included.
 * Every statement over a history table (`call_events`, `webhook_deliveries`,
 * `webhook_attempts`) bounds its rows by one, so that Postgres reads only the partitions (UTC
 * days) the range covers; bounded on both sides by days that have partitions, it also leaves out
 * the DEFAULT partition, which can hold rows only of days without one.
 */
export interface HistoryRange {
  from: Date;
  to: Date;
}

/** Which ends a range condition includes: `[` `]` an included end, `(` `)` an excluded one. */
export type RangeEnds = `${'[' | '('}${']' | ')'}`;

/**
 * THE condition that bounds a history table's `column` (its partition key) by `from` and `to`
 * (SQL: `$n` parameters, `?` marks, or expressions), both ends included unless `ends` says
 * otherwise: what lets Postgres read only the partitions (days) between them.
 */
export function inRange(column: string, from: string, to: string, ends: RangeEnds = '[]'): string {
  return `${column} ${ends[0] === '[' ? '>=' : '>'} ${from} AND ${column} ${ends[1] === ']' ? '<=' : '<'} ${to}`;
}

/** `inRange` over `range`, with `?` marks: the clause and its values, for `Where.and`. */
export function whereInRange(column: string, range: HistoryRange, ends: RangeEnds = '[]'): [string, Date, Date] {
  return [inRange(column, '?', '?', ends), range.from, range.to];
}

const DAY_MS = 86_400_000;

/**
 * Rows are stamped by the database's clock: a range ends this far past the app's now, so a
 * row is never out of reach because the two clocks differ by less.
 */
const CLOCK_SLACK_MS = 3_600_000;

/** From `from` to now (and the clock slack). */
export function rangeFrom(from: Date, now = Date.now()): HistoryRange {
  return { from, to: new Date(now + CLOCK_SLACK_MS) };
}

/** The last `days` days to now: what a retention of that many days keeps. */
export function retainedRange(days: number, now = Date.now()): HistoryRange {
  return rangeFrom(new Date(now - days * DAY_MS), now);
}

/** The one instant of a row whose `created_at` is known. */
export function exactly(at: Date): HistoryRange {
  return { from: at, to: at };
}

/** The narrowest range holding every time given (a batch of rows). */
export function spanning(times: Date[]): HistoryRange {
  const ms = times.map((t) => t.getTime());
  return { from: new Date(Math.min(...ms)), to: new Date(Math.max(...ms)) };
}

/** Start of the UTC day holding `at`. */
export function dayStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** The UTC days a range touches, each as its first instant and the next day's. */
export function daysOf(range: HistoryRange): Array<{ start: Date; end: Date }> {
  const days = [];
  for (let start = dayStart(range.from).getTime(); start <= range.to.getTime(); start += DAY_MS) {
    days.push({ start: new Date(start), end: new Date(start + DAY_MS) });
  }
  return days;
}
