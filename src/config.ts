import Joi from 'joi';
import { defaultLogFormat, type LogFormat } from './lib/log-format.js';

/** CONTRACT.md §1. The only reader of `process.env`; a bad value stops the start, naming every offending variable. */
export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  /** API processes one `web` dyno runs on its port (node:cluster); 1: the process is the server itself. */
  webConcurrency: number;
  /** Postgres URL; `databaseUrlExplicit` tells whether it came from the environment. */
  databaseUrl: string;
  databaseUrlExplicit: boolean;
  /**
   * A session connection to Postgres itself (`DATABASE_DIRECT_URL`), for what a transaction
   * pooler cannot carry: LISTEN, migrations, named prepared statements. Unset: `databaseUrl`.
   */
  databaseDirectUrl: string;
  /** `DATABASE_DIRECT_URL` is set: `databaseUrl` is a transaction pooler (PgBouncer), so no statement there is named. */
  databasePooled: boolean;
  databasePoolSize: number;
  /** A hot standby the API's lists, feed, usage and delivery history read from (docs/scaling.md#read-replica); null: none. */
  replica: { url: string; maxLagMs: number } | null;
  /** One server (`REDIS_URL`) or a cluster by its seeds (`REDIS_CLUSTER_NODES`, which wins). */
  redis: RedisTarget;
  /** A plain name: the hash tags that pick a key's cluster slot are added per key (redisKey). */
  redisPrefix: string;
  operatorToken: string | null;
  logLevel: string;
  /** `pretty`: one coloured line per log event, for a person at a terminal; `json` for everything else (see log-format.ts). */
  logFormat: LogFormat;
  /** false: req.ip is the peer; true: left-most X-Forwarded-For (client-writable); n: proxy hops (1 behind Heroku's router). */
  trustProxy: boolean | number;
  webhook: {
    maxAttempts: number;
    backoffBaseMs: number;
    timeoutMs: number;
    disableAfterHours: number;
    retentionDays: number;
    allowPrivateNetworks: boolean;
  };
  /** How long call events are kept (CONTRACT.md §4); never less than webhook deliveries, which need theirs. */
  eventRetentionDays: number;
  sim: { ringMs: number; secondMs: number };
  callsWorkerConcurrency: number;
  /** Deliveries one `webhooks` worker process sends at once, and at most per endpoint. */
  webhooksWorkerConcurrency: number;
  webhookEndpointConcurrency: number;
  /** Niceness of `web` and `calls`, so on a shared, saturated machine committed work drains first. */
  intakeNice: number;
}

/** A Redis server by URL, or a Redis Cluster by its seed nodes. */
export type RedisTarget = { mode: 'server'; url: string } | { mode: 'cluster'; nodes: ClusterSeed[] };
export interface ClusterSeed {
  host: string;
  port: number;
}

/** `host:port` seeds, comma-separated, IPv6 hosts in brackets; null when any entry is not of that form. */
function parseClusterSeeds(value: string): ClusterSeed[] | null {
  const seeds = value.split(',').map((entry) => /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry.trim()));
  if (seeds.some((m) => m === null || Number(m[3]) < 1 || Number(m[3]) > 65535)) return null;
  return seeds.map((m) => ({ host: m![1] ?? m![2], port: Number(m![3]) }));
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ringlane';

/** The environment as the schema returns it: values converted, defaults filled in. */
interface Env {
  NODE_ENV: Config['nodeEnv'];
  PORT: number;
  WEB_CONCURRENCY: number;
  DATABASE_URL?: string;
  DATABASE_DIRECT_URL?: string;
  DATABASE_POOL_SIZE: number;
  DATABASE_REPLICA_URL?: string;
  DATABASE_REPLICA_MAX_LAG_MS: number;
  REDIS_URL: string;
  /** The seeds, parsed; '' when set empty. */
  REDIS_CLUSTER_NODES?: ClusterSeed[] | '';
  REDIS_PREFIX: string;
  OPERATOR_TOKEN?: string;
  LOG_LEVEL?: string;
  LOG_FORMAT?: LogFormat;
  TRUST_PROXY: boolean | number;
  WEBHOOK_MAX_ATTEMPTS: number;
  WEBHOOK_BACKOFF_BASE_MS: number;
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_DISABLE_AFTER_HOURS: number;
  WEBHOOK_RETENTION_DAYS: number;
  WEBHOOK_ALLOW_PRIVATE_NETWORKS?: boolean;
  EVENT_RETENTION_DAYS: number;
  SIM_RING_MS: number;
  SIM_SECOND_MS: number;
  CALLS_WORKER_CONCURRENCY: number;
  WEBHOOKS_WORKER_CONCURRENCY: number;
  WEBHOOK_ENDPOINT_CONCURRENCY: number;
  INTAKE_NICE: number;
}

const schema = Joi.object<Env>({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  WEB_CONCURRENCY: Joi.number().integer().min(1).max(64).default(1),
  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
  DATABASE_DIRECT_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .allow(''),
  DATABASE_POOL_SIZE: Joi.number().integer().min(1).max(200).default(20),
  DATABASE_REPLICA_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .allow(''),
  DATABASE_REPLICA_MAX_LAG_MS: Joi.number().integer().min(0).default(1000),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: Joi.string()
    .allow('')
    .custom((value: string, helpers) => parseClusterSeeds(value) ?? helpers.error('any.invalid'))
    .messages({ 'any.invalid': '"REDIS_CLUSTER_NODES" must be comma-separated host:port seeds such as 10.0.0.5:6379,10.0.0.6:6379' }),
  REDIS_PREFIX: Joi.string()
    .pattern(/^[A-Za-z0-9_.-]+(?::[A-Za-z0-9_.-]+)*$/)
    .default('ringlane')
    .messages({
      'string.pattern.base':
        '"REDIS_PREFIX" must be a plain name such as ringlane (letters, digits, _ . - and inner colons; no braces: the hash tags are added per queue and per organization)',
    }),
  OPERATOR_TOKEN: Joi.string().min(16).allow(''),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
  LOG_FORMAT: Joi.string().valid('json', 'pretty'),
  TRUST_PROXY: Joi.alternatives()
    .try(Joi.boolean(), Joi.number().integer().min(0))
    .default(false)
    .messages({ 'alternatives.types': '"TRUST_PROXY" must be true, false or a number of proxy hops' }),
  WEBHOOK_MAX_ATTEMPTS: Joi.number().integer().min(1).max(100).default(12),
  WEBHOOK_BACKOFF_BASE_MS: Joi.number().integer().min(1).default(30000),
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(1).default(10000),
  WEBHOOK_DISABLE_AFTER_HOURS: Joi.number().min(0).default(120),
  WEBHOOK_RETENTION_DAYS: Joi.number().min(0).default(30),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Joi.boolean(),
  EVENT_RETENTION_DAYS: Joi.number().min(0).default(30),
  SIM_RING_MS: Joi.number().integer().min(0).default(1000),
  SIM_SECOND_MS: Joi.number().min(0).default(1000),
  CALLS_WORKER_CONCURRENCY: Joi.number().integer().min(1).max(1000).default(50),
  WEBHOOKS_WORKER_CONCURRENCY: Joi.number().integer().min(1).max(2000).default(200),
  WEBHOOK_ENDPOINT_CONCURRENCY: Joi.number().integer().min(1).max(1000).default(50),
  INTAKE_NICE: Joi.number().integer().min(0).max(19).default(0),
}).unknown(true);

/** Validates an environment and returns the settings, or throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const result = schema.validate(env, { abortEarly: false, convert: true });
  if (result.error) {
    const lines = result.error.details.map((d) => `  - ${d.message}`).join('\n');
    throw new Error(`Invalid configuration:\n${lines}`);
  }
  const v = result.value;
  const nodeEnv = v.NODE_ENV;
  const databaseUrl = v.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  return Object.freeze({
    nodeEnv,
    port: v.PORT,
    webConcurrency: v.WEB_CONCURRENCY,
    databaseUrl,
    databaseUrlExplicit: v.DATABASE_URL !== undefined,
    // Set empty, as unset: no pooler in front of DATABASE_URL.
    databaseDirectUrl: v.DATABASE_DIRECT_URL || databaseUrl,
    databasePooled: Boolean(v.DATABASE_DIRECT_URL),
    databasePoolSize: v.DATABASE_POOL_SIZE,
    replica: v.DATABASE_REPLICA_URL ? Object.freeze({ url: v.DATABASE_REPLICA_URL, maxLagMs: v.DATABASE_REPLICA_MAX_LAG_MS }) : null,
    redis: Object.freeze<RedisTarget>(v.REDIS_CLUSTER_NODES ? { mode: 'cluster', nodes: v.REDIS_CLUSTER_NODES } : { mode: 'server', url: v.REDIS_URL }),
    redisPrefix: v.REDIS_PREFIX,
    operatorToken: v.OPERATOR_TOKEN ? v.OPERATOR_TOKEN : null,
    logLevel: v.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info'),
    logFormat: v.LOG_FORMAT ?? defaultLogFormat(nodeEnv, process.stdout.isTTY),
    trustProxy: v.TRUST_PROXY,
    webhook: Object.freeze({
      maxAttempts: v.WEBHOOK_MAX_ATTEMPTS,
      backoffBaseMs: v.WEBHOOK_BACKOFF_BASE_MS,
      timeoutMs: v.WEBHOOK_TIMEOUT_MS,
      disableAfterHours: v.WEBHOOK_DISABLE_AFTER_HOURS,
      retentionDays: v.WEBHOOK_RETENTION_DAYS,
      allowPrivateNetworks: v.WEBHOOK_ALLOW_PRIVATE_NETWORKS ?? nodeEnv !== 'production',
    }),
    eventRetentionDays: v.EVENT_RETENTION_DAYS,
    sim: Object.freeze({ ringMs: v.SIM_RING_MS, secondMs: v.SIM_SECOND_MS }),
    callsWorkerConcurrency: v.CALLS_WORKER_CONCURRENCY,
    webhooksWorkerConcurrency: v.WEBHOOKS_WORKER_CONCURRENCY,
    webhookEndpointConcurrency: v.WEBHOOK_ENDPOINT_CONCURRENCY,
    intakeNice: v.INTAKE_NICE,
  });
}

function loadOrExit(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}

export const config: Config = loadOrExit();
