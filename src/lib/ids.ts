import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from [0-9A-Za-z] with a CSPRNG. */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** What an id can look like (CONTRACT.md §2 "Ids"); anything else names nothing. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;

/** An opaque id with a type prefix: `newId('key')` → `key_3fZ...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomToken(22)}`;
}
