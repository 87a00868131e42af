import { Redis, type RedisOptions } from 'ioredis';
import { config } from '../config.js';
import { AppError, ServiceUnavailableError } from './errors.js';
import { logger } from './logger.js';

/** Errors a connection of ours has reported; BullMQ passes each on to every queue over it. */
const reported = new WeakSet<Error>();

/**
 * `command` connections serve request paths and fail fast while Redis is away
 * (BullMQ's production guide: producers must not queue commands offline); commands issued
 * in the same tick share one write (auto-pipelining: a round trip costs more than a command);
 * `blocking` connections are for BullMQ workers, which wait and retry forever.
 */
export function createRedis(kind: 'command' | 'blocking', url = config.redisUrl): Redis {
  const options: RedisOptions =
    kind === 'command'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false, enableAutoPipelining: true }
      : { maxRetriesPerRequest: null, enableReadyCheck: false };
  const redis = new Redis(url, { ...options, connectionName: `ringlane-${kind}` });
  // ioredis reconnects by itself; without a listener it prints the stack of every failed
  // attempt to stderr. One line when the connection goes and one when it is back say it all.
  let down = false;
  redis.on('error', (err: Error) => {
    reported.add(err);
    if (down) return;
    down = true;
    logger.warn({ err: err.message, connection: kind }, 'Redis unavailable; reconnecting');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ connection: kind }, 'Redis available again');
  });
  return redis;
}

/** True for an error its connection (made by createRedis) has already logged. */
export const isReportedRedisError = (err: Error): boolean => reported.has(err);

/** A Redis key under the service prefix (a hash tag, so every key shares one cluster slot). */
export function redisKey(...parts: string[]): string {
  return [config.redisPrefix, ...parts].join(':');
}

/** Resolves once the connection is ready, or rejects after `timeoutMs`. */
export function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}

/** Runs a Redis command a request cannot do without; Redis being away becomes a 503, not a 500. */
export async function needRedis<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new ServiceUnavailableError('A backing service (Redis) is not answering; try again shortly.');
  }
}
