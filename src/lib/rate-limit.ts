import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { RateLimitedError } from './errors.js';
import { needRedis, redisKey, type RedisClient } from './redis.js';

// A sliding-window log per key in one sorted set, evaluated atomically in Redis with Redis's
// own clock, so the limits hold across any number of API processes and their clock skew.
// KEYS are the limits' sets, ARGV their (window, max) pairs and then the slot's member: a slot
// is taken in every set or, when any is full, in none; the answer is {0, 0} or the wait in ms
// until all have room and the (1-based) index of the limit that waits longest.
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local wait, full = 0, 0
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i - 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2 * i]) then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    local until_free = tonumber(oldest[2]) + window - now
    if until_free > wait then wait, full = until_free, i end
  end
end
if full > 0 then return {wait, full} end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[#ARGV])
  redis.call('PEXPIRE', key, ARGV[2 * i - 1])
end
return {0, 0}
`;

export interface Limit {
  name: string;
  max: number;
  windowMs: number;
  /** What is counted, for the 429 message ("At most 5 <counts> per 60 minutes"); default "requests". */
  counts?: string;
}

export interface Reservation {
  /** Gives the slot back (the limited action did not happen after all). */
  release(): Promise<void>;
}

/**
 * Takes one slot of `limit` for `subject`, or throws 429 `rate_limited` with the seconds
 * until a slot frees up. The subject is the key's hash tag: subjects spread over a cluster.
 */
export function reserve(redis: RedisClient, limit: Limit, subject: string): Promise<Reservation> {
  return reserveAll(redis, subject, [[limit, subject]]);
}

/**
 * Takes one slot of every limit for its subject at once, or none: throws 429 `rate_limited`
 * with the seconds until every one has room. One script uses all their keys, so they share the
 * hash tag `tag` (on a cluster, a script's keys must be in one slot).
 */
export async function reserveAll(redis: RedisClient, tag: string, slots: [limit: Limit, subject: string][]): Promise<Reservation> {
  const keys = slots.map(([limit, subject]) => redisKey('ratelimit', tag, limit.name, subject));
  const member = randomUUID();
  const args = [...slots.flatMap(([limit]) => [limit.windowMs, limit.max]), member];
  const [waitMs, full] = (await needRedis(() => redis.eval(SLIDING_WINDOW, keys.length, ...keys, ...args))) as [number, number];
  if (waitMs > 0) {
    const [limit] = slots[full - 1];
    throw new RateLimitedError(
      Math.max(1, Math.ceil(waitMs / 1000)),
      `At most ${limit.max} ${limit.counts ?? 'requests'} per ${limit.windowMs / 60_000} minutes; try again later.`,
    );
  }
  return { release: () => needRedis(async () => void (await Promise.all(keys.map((key) => redis.zrem(key, member))))) };
}

/**
 * The subject of a per-client-address limit: an IPv4 address (IPv4-mapped IPv6 included), or
 * an IPv6 address's /64, since one subscriber usually holds a whole /64 and could otherwise
 * take a fresh address for every try.
 */
export function clientAddressSubject(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown';
  const address = ipaddr.process(ip);
  if (address instanceof ipaddr.IPv4) return address.toString();
  return `${new ipaddr.IPv6([...address.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}
