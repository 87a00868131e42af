import type { Redis } from 'ioredis';
import { createRedis } from '../../src/lib/redis.js';

let shared: Redis | null = null;

/** One `command` connection shared by the tests of this run. */
export function redisForTests(): Redis {
  shared ??= createRedis('command');
  return shared;
}

export async function closeRedisForTests(): Promise<void> {
  shared?.disconnect();
  shared = null;
}
