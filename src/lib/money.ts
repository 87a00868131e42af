/** Integer micros (1 unit = 1,000,000), shown with six decimals (CONTRACT.md §2 "Money"); never floats. */
export type Micros = bigint;

export const MICROS_PER_UNIT = 1_000_000n;

// Input bounds keep every charge, balance and sum inside the bigint columns (±9.2e18 micros).

/** 1,000.000000 per minute or text: a call (at most 4 hours) stays below 2.4e11 micros. */
export const MAX_RATE_MICROS = 1_000n * 1_000_000n;
/** The largest single balance adjustment: 1,000,000,000.000000. */
export const MAX_ADJUSTMENT_MICROS = 1_000_000_000n * 1_000_000n;
/** Leaves room below the bigint limit. */
export const MAX_BALANCE_MICROS = 1_000_000_000_000n * 1_000_000n;

// 13 whole digits: a balance may reach 10^12 (MAX_BALANCE_MICROS), and what is written reads back.
// Every amount taken is bounded by its own limit after this (see `money` in src/http/schemas.ts).
const DECIMAL = /^(-)?(\d{1,13})(?:\.(\d{1,6}))?$/;

/** Parses "12", "-1.5" or "0.000001" into micros; returns null for anything else. */
export function parseMoney(text: string): Micros | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const [, sign, whole, frac = ''] = m;
  const micros = BigInt(whole) * MICROS_PER_UNIT + BigInt(frac.padEnd(6, '0'));
  return sign ? -micros : micros;
}

/** Formats micros as "1.250000" (or "-0.000001"). */
export function formatMoney(micros: Micros): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  const frac = (abs % MICROS_PER_UNIT).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

/** Per started second at a per-minute rate, rounded up so a fraction of a micro is never given away. */
export function chargeForSeconds(seconds: number, perMinute: Micros): Micros {
  if (!Number.isInteger(seconds) || seconds < 0) throw new RangeError(`bad duration ${seconds}`);
  const product = BigInt(seconds) * perMinute;
  return (product + 59n) / 60n;
}
