import { config, type RedisTarget } from '../../src/config.js';
import { createRedis, scanKeys, type RedisClient } from '../../src/lib/redis.js';

let shared: RedisClient | null = null;

/** One `command` connection shared by the tests of this run (a cluster connection in the cluster pass). */
export function redisForTests(): RedisClient {
  shared ??= createRedis('command');
  return shared;
}

export async function closeRedisForTests(): Promise<void> {
  shared?.disconnect();
  shared = null;
}

/** A Redis of this run's kind (server or cluster) where nothing answers: what createRedis takes, and the environment naming it. */
export const unreachableRedis = (): { target: RedisTarget; env: Record<string, string> } =>
  config.redis.mode === 'cluster'
    ? { target: { mode: 'cluster', nodes: [{ host: '127.0.0.1', port: 1 }] }, env: { REDIS_CLUSTER_NODES: '127.0.0.1:1' } }
    : { target: { mode: 'server', url: 'redis://127.0.0.1:1' }, env: { REDIS_URL: 'redis://127.0.0.1:1' } };

/** Deletes every key matching `pattern`, on every master, one key per command (a cluster refuses keys of several slots in one). */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  await Promise.all((await scanKeys(redis, pattern)).map((key) => redis.unlink(key)));
}
