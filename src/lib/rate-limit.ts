import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { RateLimitedError } from './errors.js';
import { needRedis, redisKey, type RedisClient } from './redis.js';

// A sliding-window log per key, atomic in Redis on Redis's clock, so limits hold across processes.
// KEYS: the limits' sets; ARGV: (window, max) pairs, then the member. A slot is taken in every set or
// none; returns {0, 0}, or the wait in ms until all have room and the 1-based index of the longest wait.
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

/** Takes a slot of `limit` for `subject` or throws 429; the subject is the hash tag, so subjects spread over a cluster. */
export function reserve(redis: RedisClient, limit: Limit, subject: string): Promise<Reservation> {
  return reserveAll(redis, subject, [[limit, subject]]);
}

/** One slot of every limit or none (429); the keys share hash tag `tag`, as a script's keys must be in one cluster slot. */
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

/** IPv4, or an IPv6 /64: one subscriber usually holds a whole /64 and could take a fresh address per try. */
export function clientAddressSubject(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown';
  const address = ipaddr.process(ip);
  if (address instanceof ipaddr.IPv4) return address.toString();
  return `${new ipaddr.IPv6([...address.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}
