import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { config, type RedisTarget } from '../config.js';
import { AppError, ServiceUnavailableError } from './errors.js';
import { logger } from './logger.js';

/** One Redis server, or a Redis Cluster (`REDIS_CLUSTER_NODES`). */
export type RedisClient = Redis | Cluster;

/**
 * `command`: request paths, fails fast while Redis is away (no offline queue). Not auto-pipelined:
 * ioredis then builds a pipeline per tick, copying every script BullMQ defined onto it, and on a
 * request path a tick has one command (each request runs in callbacks of its own), so it cost
 * more than it saved (measured: 10–30% more CPU per POST /v1/calls, about 10% per GET).
 * `blocking`: BullMQ workers, retry forever. `probe`: connects once, for a start-up check.
 */
export type ConnectionKind = 'command' | 'blocking' | 'probe';

const KIND_OPTIONS: Record<ConnectionKind, RedisOptions> = {
  command: { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
  blocking: { maxRetriesPerRequest: null, enableReadyCheck: false },
  probe: { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 3000 },
};

/** Errors a connection of ours has reported; BullMQ passes each on to every queue over it. */
const reported = new WeakSet<Error>();

function connect(kind: ConnectionKind, target: RedisTarget): RedisClient {
  const options: RedisOptions = { ...KIND_OPTIONS[kind], connectionName: `ringlane-${kind}` };
  if (target.mode === 'server') return new Redis(target.url, options);
  // On a cluster, queueing, pipelining and reconnecting are the cluster client's options; the rest is
  // per node. Reads go to masters: a replica may lag a script's writes.
  const { enableOfflineQueue, enableAutoPipelining, enableReadyCheck, lazyConnect, retryStrategy, ...node } = options;
  return new Cluster(
    target.nodes.map((seed) => ({ ...seed })),
    {
      enableOfflineQueue,
      enableAutoPipelining,
      enableReadyCheck,
      lazyConnect,
      clusterRetryStrategy: retryStrategy,
      redisOptions: node,
    },
  );
}

/** A connection of `kind` to the configured Redis server or cluster. */
export function createRedis(kind: ConnectionKind, target: RedisTarget = config.redis): RedisClient {
  const redis = connect(kind, target);
  if (kind === 'probe') {
    redis.on('error', () => undefined); // the caller reports what connect() rejects with
    return redis;
  }
  // Without a listener ioredis prints every failed attempt's stack; one line down and one up say it all.
  // A cluster client may stay ready while a master is away: watch `-node` and `node error` too.
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

/** On each ready after connecting; on a cluster per node, as the client may stay ready while a master (maybe restarted empty) was away. */
export function onReady(redis: RedisClient, listener: () => void): void {
  if (redis instanceof Cluster) redis.on('+node', (node: Redis) => node.on('ready', listener));
  else redis.on('ready', listener);
}

/** What commands fail with while a cluster's masters are away, or before its slots are all served again. */
const CLUSTER_AWAY = /^(CLUSTERDOWN|Too many Cluster redirections|Failed to refresh slots cache|Cluster isn't ready)/;

/**
 * What a socket to Redis fails with while the server is away. BullMQ's workers duplicate our
 * connection for their blocking reads, and report its failures as the worker's errors, not ours.
 */
const SERVER_AWAY = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** True for an error the connection has already logged, or one that only says Redis (or the cluster) is away. */
export const isReportedRedisError = (err: Error & { code?: unknown }): boolean =>
  reported.has(err) || CLUSTER_AWAY.test(err.message) || (typeof err.code === 'string' && SERVER_AWAY.has(err.code));

/**
 * `<REDIS_PREFIX>:<area>:{<tag>}:<parts>`. A cluster places a key by its tag alone: keys used together in
 * one script or transaction share a tag, others get their own to spread. Area first so SCAN can match one kind.
 */
export function redisKey(area: string, tag: string, ...parts: string[]): string {
  return [`${config.redisPrefix}:${area}:{${tag}}`, ...parts].join(':');
}

/** The replies of a transaction's commands, in order; an aborted transaction or a failed command throws. */
export function execResults(results: Array<[Error | null, unknown]> | null): unknown[] {
  if (!results) throw new Error('Redis transaction aborted');
  return results.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
}

/** The tag of a key made by redisKey. */
export const tagOf = (key: string): string => key.slice(key.indexOf('{') + 1, key.indexOf('}'));

/** The servers holding the keys: the masters of a cluster, or the one server. */
export const mastersOf = (redis: RedisClient): Redis[] => (redis instanceof Cluster ? redis.nodes('master') : [redis]);

/** Every key matching `pattern`; a cluster's SCAN covers one node, so each master is scanned. */
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

/** For a command a request cannot do without: Redis away becomes a 503, not a 500. */
export async function needRedis<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new ServiceUnavailableError('A backing service (Redis) is not answering; try again shortly.');
  }
}
