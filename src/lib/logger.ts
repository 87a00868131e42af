import { pino, type DestinationStream, type Logger } from 'pino';
import { config } from '../config.js';

/**
 * Field names whose values are never written, at any depth: secrets, passwords, tokens,
 * credentials, and keys (`key`, `api_key`, `apiKey`, `idempotency-key`; not `key_id` or `monkey`).
 */
const SECRET_WORD = /secret|password|passwd|token|authorization|cookie|credential|signature|(^|[_-])keys?$/;
const isSecretName = (name: string) => SECRET_WORD.test(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase());
const CENSOR = '[redacted]';
/** Deeper than this, a logged object is cut (nothing we log nests this deep; a cycle would). */
const MAX_DEPTH = 8;

/**
 * A copy of `value` with every field named like a secret censored, whatever its depth, and
 * every error reduced by `serializeError`. pino's own `redact` needs every path spelled out
 * and has no "any depth" wildcard.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (value instanceof Error) return redactSecrets(serializeError(value), depth);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) copy[name] = isSecretName(name) ? CENSOR : redactSecrets(item, depth + 1);
  return copy;
}

/**
 * What an error says in a log line: its type, message, stack, code (a Postgres SQLSTATE, a
 * system error code) and cause. Nothing else: a TypeORM QueryFailedError carries the query's
 * parameters (webhook secrets, contact metadata), a got HTTPError its request's headers.
 */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const { code, constraint } = err as { code?: unknown; constraint?: unknown };
  const driver = (err as { driverError?: { code?: unknown; constraint?: unknown } }).driverError;
  const out: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack };
  const sqlState = driver?.code ?? code;
  if (typeof sqlState === 'string' || typeof sqlState === 'number') out.code = sqlState;
  const violated = driver?.constraint ?? constraint;
  if (typeof violated === 'string') out.constraint = violated;
  if (err.cause !== undefined && depth < 3) out.cause = serializeError(err.cause, depth + 1);
  return out;
}

/** A logger writing to `destination` (standard output by default); tests capture it this way. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // pino applies this before its serializers, so errors are reduced here (see redactSecrets)
      // and its own error serializer, which would see plain objects, is left out.
      serializers: { err: (err: unknown) => err },
      formatters: { log: (object) => redactSecrets(object) as Record<string, unknown> },
    },
    destination,
  );
}

/**
 * The process logger. Nothing secret reaches it: errors keep only what `serializeError`
 * keeps, and fields named like secrets are censored at any depth.
 */
export const logger = createLogger(config.logLevel);
