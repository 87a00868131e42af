import { execResults, redisKey, scanKeys, tagOf, type RedisClient } from '../lib/redis.js';

const HOUR_MS = 3_600_000;

// Admits waiting calls in creation order while a concurrency slot and an hourly start are free: one
// atomic script on Redis's clock, so the limits hold across every `calls` worker.
// Returns { retry_at_ms or -1, admitted ids... }.
const ADMIT = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local max_active, max_hour, batch = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ${HOUR_MS})
local result = { -1 }
while #result - 1 < batch do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #head == 0 then break end
  if redis.call('ZCARD', KEYS[2]) >= max_active then break end
  if redis.call('ZCARD', KEYS[3]) >= max_hour then
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    result[1] = tonumber(oldest[2]) + ${HOUR_MS}
    break
  end
  redis.call('ZREM', KEYS[1], head[1])
  redis.call('ZADD', KEYS[2], now, head[1])
  redis.call('ZADD', KEYS[3], now, head[1])
  result[#result + 1] = head[1]
end
return result
`;

// The calls holding a concurrency slot since before `ARGV[1]` ms ago, on Redis's clock (admission's).
const ADMITTED_BEFORE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
`;

export interface Limits {
  maxConcurrentCalls: number;
  maxCallsPerHour: number;
}

/** Own limits, a tenant's capped at its reseller's ceiling (stored values above a lowered ceiling apply again if it rises). */
export function effectiveLimits(org: Limits & { parent?: Limits | null }): Limits {
  return {
    maxConcurrentCalls: Math.min(org.maxConcurrentCalls, org.parent?.maxConcurrentCalls ?? Infinity),
    maxCallsPerHour: Math.min(org.maxCallsPerHour, org.parent?.maxCallsPerHour ?? Infinity),
  };
}

/** CONTRACT.md's shape of a pair of limits (a tenant's, a ceiling). */
export const presentLimits = (limits: Limits) => ({ max_concurrent_calls: limits.maxConcurrentCalls, max_calls_per_hour: limits.maxCallsPerHour });

/** The most calls one admission takes (and the engine dials as one batch). */
const ADMISSION_BATCH = 100;

export interface Admission {
  callIds: string[];
  /** The batch is full: more calls may be waiting, admissible now. */
  full: boolean;
  retryAt: Date | null;
}

type CallSet = 'waiting' | 'active' | 'starts';

/**
 * Per organization, a Redis semaphore (calls ringing or in progress) and a sliding hour of starts, with
 * its waiting calls. Keys carry the org id as hash tag: one slot for the script, orgs spread over masters.
 */
export class CallLimits {
  constructor(private readonly redis: RedisClient) {}

  private static key(orgId: string, set: CallSet): string {
    return redisKey('calls', orgId, set);
  }

  private keys(orgId: string): [string, string, string] {
    return [CallLimits.key(orgId, 'waiting'), CallLimits.key(orgId, 'active'), CallLimits.key(orgId, 'starts')];
  }

  async enqueue(orgId: string, calls: Array<{ id: string; createdAt: Date }>): Promise<void> {
    if (calls.length === 0) return;
    const args = calls.flatMap((c) => [c.createdAt.getTime(), c.id]);
    await this.redis.zadd(this.keys(orgId)[0], 'NX', ...args);
  }

  async admit(orgId: string, limits: Limits): Promise<Admission> {
    const [retryAt, ...callIds] = (await this.redis.eval(
      ADMIT,
      3,
      ...this.keys(orgId),
      limits.maxConcurrentCalls,
      limits.maxCallsPerHour,
      ADMISSION_BATCH,
    )) as [number, ...string[]];
    return { callIds, full: callIds.length === ADMISSION_BATCH, retryAt: retryAt > 0 ? new Date(retryAt) : null };
  }

  /** Frees calls' concurrency slots (idempotent); their starts still count for the hour. Returns how many calls wait for admission. */
  async release(orgId: string, callIds: string[]): Promise<number> {
    const [waiting, active] = this.keys(orgId);
    if (callIds.length === 0) return this.redis.zcard(waiting);
    const [, , stillWaiting] = execResults(
      await this.redis
        .multi()
        .zrem(active, ...callIds)
        .zrem(waiting, ...callIds)
        .zcard(waiting)
        .exec(),
    );
    return Number(stillWaiting);
  }

  /** Takes back calls' starts in the rolling hour: admitted, they were never dialed (a listed number's). */
  async returnStarts(orgId: string, callIds: string[]): Promise<void> {
    if (callIds.length === 0) return;
    await this.redis.zrem(CallLimits.key(orgId, 'starts'), ...callIds);
  }

  async orgsWithWaitingCalls(): Promise<string[]> {
    return this.scanOrgs('waiting');
  }

  async activeCalls(orgId: string): Promise<string[]> {
    return this.redis.zrange(this.keys(orgId)[1], 0, -1);
  }

  /** Those of the organization's calls holding a slot that were admitted more than `ms` ago. */
  async admittedBefore(orgId: string, ms: number): Promise<string[]> {
    return (await this.redis.eval(ADMITTED_BEFORE, 1, this.keys(orgId)[1], ms)) as string[];
  }

  async orgsWithActiveCalls(): Promise<string[]> {
    return this.scanOrgs('active');
  }

  private async scanOrgs(set: 'waiting' | 'active'): Promise<string[]> {
    return (await scanKeys(this.redis, CallLimits.key('*', set))).map(tagOf);
  }
}
