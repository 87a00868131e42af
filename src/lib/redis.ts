import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { config, type RedisTarget } from '../config.js';
import { AppError, ServiceUnavailableError } from './errors.js';
import { logger } from './logger.js';

/** A connection to the service's Redis: one server, or a Redis Cluster (`REDIS_CLUSTER_NODES`). */
export type RedisClient = Redis | Cluster;

/**
 * `command` connections serve request paths and fail fast while Redis is away
 * (BullMQ's production guide: producers must not queue commands offline); commands issued
 * in the same tick share one write (auto-pipelining: a round trip costs more than a command).
 * `blocking` connections are for BullMQ workers, which wait and retry forever.
 * `probe` connects once when asked (`connect()`), never again, for a check at start that
 * reports the failure itself.
 */
export type ConnectionKind = 'command' | 'blocking' | 'probe';

const KIND_OPTIONS: Record<ConnectionKind, RedisOptions> = {
  command: { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true },
  blocking: { maxRetriesPerRequest: null, enableReadyCheck: false },
  probe: { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 3000 },
};

/** Errors a connection of ours has reported; BullMQ passes each on to every queue over it. */
const reported = new WeakSet<Error>();

function connect(kind: ConnectionKind, target: RedisTarget): RedisClient {
  const options: RedisOptions = { ...KIND_OPTIONS[kind], connectionName: `ringlane-${kind}` };
  if (target.mode === 'server') return new Redis(target.url, options);
  // On a cluster, what concerns the connection as a whole (queueing while it is not ready,
  // pipelining, reconnecting) is the cluster client's; the rest applies to each node's connection.
  // Reads go to the masters (scaleReads' default): a replica may lag behind a script's writes.
  const { enableOfflineQueue, enableAutoPipelining, enableReadyCheck, lazyConnect, retryStrategy, ...node } = options;
  return new Cluster(target.nodes.map((seed) => ({ ...seed })), {
    enableOfflineQueue,
    enableAutoPipelining,
    enableReadyCheck,
    lazyConnect,
    clusterRetryStrategy: retryStrategy,
    redisOptions: node,
  });
}

/** A connection of `kind` to the configured Redis (a server, or the cluster `REDIS_CLUSTER_NODES` names). */
export function createRedis(kind: ConnectionKind, target: RedisTarget = config.redis): RedisClient {
  const redis = connect(kind, target);
  if (kind === 'probe') {
    redis.on('error', () => undefined); // the caller reports what connect() rejects with
    return redis;
  }
  // ioredis reconnects by itself; without a listener it prints the stack of every failed
  // attempt to stderr. One line when the connection goes and one when it is back say it all.
  // A cluster client often stays ready itself while a master is away: it drops that master's
  // connection (`-node`; also when we disconnect, but then it is no longer ready), or reports
  // its errors (`node error`).
  let down = false;
  const lost = (err: Error) => {
    reported.add(err);
    if (down) return;
    down = true;
    logger.warn({ err: err.message, connection: kind }, 'Redis unavailable; reconnecting');
  };
  redis.on('error', lost);
  if (redis instanceof Cluster) {
    redis.on('node error', lost);
    redis.on('-node', (node: Redis) => {
      if (redis.status === 'ready') lost(new Error(`lost the connection to ${node.options.host}:${node.options.port}`));
    });
  }
  onReady(redis, () => {
    if (!down) return;
    down = false;
    logger.info({ connection: kind }, 'Redis available again');
  });
  return redis;
}

/**
 * Calls `listener` every time Redis is ready after a connection was made: one server when it
 * (re)connected; on a cluster, each master (or replica) whose connection is ready, which is
 * when a master that restarted, perhaps empty, is reached again. A cluster client does not
 * always become ready again itself: it may have stayed ready while a master was away.
 */
export function onReady(redis: RedisClient, listener: () => void): void {
  if (redis instanceof Cluster) redis.on('+node', (node: Redis) => node.on('ready', listener));
  else redis.on('ready', listener);
}

/** What commands fail with while a cluster's masters are away, or before its slots are all served again. */
const CLUSTER_AWAY = /^(CLUSTERDOWN|Too many Cluster redirections|Failed to refresh slots cache|Cluster isn't ready)/;

/**
 * True for an error its connection (made by createRedis) has already logged, or that only says
 * the cluster is away, which the connection has logged (its `node error`).
 */
export const isReportedRedisError = (err: Error): boolean => reported.has(err) || CLUSTER_AWAY.test(err.message);

/**
 * A key of the service: `<REDIS_PREFIX>:<area>:{<tag>}:<parts>`. Redis Cluster places a key by its
 * hash tag (the part in braces) alone, so the keys one Lua script or transaction uses together
 * share a tag, and everything else gets a tag of its own, so that the keys spread over the
 * masters: an organization's keys have its id, a queue its name (queuePrefix), the sign-in
 * limits, the webhook metrics and the auth epoch a fixed word each. The area (the owner: `calls`,
 * `queue`, `ratelimit`, ...) comes first, so a SCAN for one kind of key over every tag
 * (`<prefix>:calls:{*}:active`) matches that kind only.
 */
export function redisKey(area: string, tag: string, ...parts: string[]): string {
  return [`${config.redisPrefix}:${area}:{${tag}}`, ...parts].join(':');
}

/** The tag of a key made by redisKey. */
export const tagOf = (key: string): string => key.slice(key.indexOf('{') + 1, key.indexOf('}'));

/** The servers holding the keys: the masters of a cluster, or the one server. */
export const mastersOf = (redis: RedisClient): Redis[] => (redis instanceof Cluster ? redis.nodes('master') : [redis]);

/**
 * Every key matching `pattern` (SCAN, a page at a time). A cluster's SCAN covers only the node it
 * is sent to, so each master is scanned.
 */
export async function scanKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of mastersOf(redis)) {
    let cursor = '0';
    do {
      const [next, page] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      keys.push(...page);
    } while (cursor !== '0');
  }
  return keys;
}

/** Resolves once the connection is ready, or rejects after `timeoutMs`. */
export function waitForRedis(redis: RedisClient, timeoutMs: number): Promise<void> {
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
