import { createHash, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../lib/ids.js';

export const API_KEY_PREFIX = 'rk_live_';
export const SESSION_TOKEN_PREFIX = 'rs_sess_';
/** SPEC.md §8: the displayed prefix is 12 characters, `rk_live_` plus 4. */
export const DISPLAYED_PREFIX_LENGTH = 12;
/** 40 base62 characters ≈ 238 bits of entropy. */
const TOKEN_LENGTH = 40;

export const newApiKey = (): string => API_KEY_PREFIX + randomToken(TOKEN_LENGTH);
export const newSessionToken = (): string => SESSION_TOKEN_PREFIX + randomToken(TOKEN_LENGTH);

/** A fast hash is right: the tokens are long random strings, nothing for a slow hash to protect. */
export function hashToken(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
