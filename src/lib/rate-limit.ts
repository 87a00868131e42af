import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { RateLimitedError } from './errors.js';
import { needRedis, redisKey } from './redis.js';

// A sliding-window log in one sorted set, evaluated atomically in Redis with Redis's own
// clock, so the limit holds across any number of API processes and their clock skew.
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return tonumber(oldest[2]) + window - now
`;

export interface Limit {
  name: string;
  max: number;
  windowMs: number;
}

export interface Reservation {
  /** Gives the slot back (the limited action did not happen after all). */
  release(): Promise<void>;
}

/**
 * Takes one slot of `limit` for `subject`, or throws 429 `rate_limited` with the seconds
 * until a slot frees up.
 */
export async function reserve(redis: Redis, limit: Limit, subject: string): Promise<Reservation> {
  const key = redisKey('ratelimit', limit.name, subject);
  const member = randomUUID();
  const waitMs = Number(await needRedis(() => redis.eval(SLIDING_WINDOW, 1, key, limit.windowMs, limit.max, member)));
  if (waitMs > 0) {
    throw new RateLimitedError(Math.max(1, Math.ceil(waitMs / 1000)), `At most ${limit.max} requests per ${limit.windowMs / 60_000} minutes; try again later.`);
  }
  return { release: async () => void (await redis.zrem(key, member)) };
}
