import type { ValueTransformer } from 'typeorm';

/** Postgres bigint ⇄ JS bigint (pg returns bigint as a string; money must not pass through float). */
export const bigintTransformer: ValueTransformer = {
  to: (value: bigint | null | undefined) => (value === null || value === undefined ? value : value.toString()),
  from: (value: string | null) => (value === null ? null : BigInt(value)),
};

/** Timestamps keep millisecond precision, the precision of a JS Date, so cursors round-trip exactly. */
export const TIMESTAMP = { type: 'timestamptz', precision: 3 } as const;
