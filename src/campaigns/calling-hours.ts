/** A campaign's calling window, in the organization's time zone. */
export interface CallingWindow {
  /** "HH:MM" local; with `end`, or both null for any time. */
  start: string | null;
  end: string | null;
  /** ISO weekdays (1 = Monday ... 7 = Sunday); null = every day. */
  weekdays: number[] | null;
}

const WEEKDAY = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 } as const;

/** The local ISO weekday and "HH:MM" of `at` in `timezone`. */
export function localClock(at: Date, timezone: string): { weekday: number; time: string } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(
    at,
  );
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return { weekday: WEEKDAY[part('weekday') as keyof typeof WEEKDAY], time: `${part('hour')}:${part('minute')}` };
}

/** A window whose end is before its start runs overnight; its early-morning part belongs to the day it started. */
export function withinCallingWindow(window: CallingWindow, at: Date, timezone: string): boolean {
  const { weekday, time } = localClock(at, timezone);
  const dayAllowed = (day: number) => window.weekdays === null || window.weekdays.includes(day);
  if (window.start === null || window.end === null) return dayAllowed(weekday);
  if (window.start <= window.end) return dayAllowed(weekday) && time >= window.start && time < window.end;
  if (time >= window.start) return dayAllowed(weekday);
  return time < window.end && dayAllowed(weekday === 1 ? 7 : weekday - 1);
}
