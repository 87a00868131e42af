import { pino, type DestinationStream, type Logger } from 'pino';
import { config } from '../config.js';
import { prettyLine } from './log-format.js';
import { traceLogFields, tracingOn } from './telemetry.js';

/** Censored at any depth: `key`, `api_key`, `apiKey`, `idempotency-key` are keys; `key_id` and `monkey` are not. */
const SECRET_WORD = /secret|password|passwd|token|authorization|cookie|credential|signature|(^|[_-])keys?$/;
/** Every line asks about the same few names: the answers are kept (a bounded number: nested data brings names of its own). */
const secretNames = new Map<string, boolean>();
const MAX_REMEMBERED_NAMES = 1000;
function isSecretName(name: string): boolean {
  let secret = secretNames.get(name);
  if (secret === undefined) {
    secret = SECRET_WORD.test(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase());
    if (secretNames.size < MAX_REMEMBERED_NAMES) secretNames.set(name, secret);
  }
  return secret;
}
const CENSOR = '[redacted]';
/** Deeper than this a logged object is cut: only a cycle nests this deep. */
const MAX_DEPTH = 8;

/** Secret-named fields censored at any depth, errors reduced (pino's `redact` has no any-depth wildcard). */
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
 * An error's type, message, stack, code and cause only: a QueryFailedError carries the query's
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

/** The active span's ids on each line written inside one (tracing on): a line leads to its trace and back. */
const traceIds = () => traceLogFields() ?? {};

/**
 * A logger writing to `destination` (stdout by default; tests capture it). With tracing on, a
 * line written inside a span carries its `trace_id` and `span_id`; off, no mixin runs at all.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // pino applies this before its serializers: errors are reduced in redactSecrets, not by pino.
      serializers: { err: (err: unknown) => err },
      formatters: { log: (object) => redactSecrets(object) as Record<string, unknown> },
      ...(tracingOn() ? { mixin: traceIds } : {}),
    },
    destination,
  );
}

/** Each JSON line written as a readable one (LOG_FORMAT=pretty; see log-format.ts). */
function pretty(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(prettyLine(line)) };
}

/** How long a logged line may wait in the buffer for more. */
const FLUSH_AFTER_MS = 250;

/**
 * Stdout, written asynchronously in chunks of at least 4 KB (or 250 ms after the first line
 * buffered) rather than one write per line: at info every request logs a line, and a write per line
 * cost the API more than the rest of the logging. pino writes what is buffered synchronously on
 * exit. Not sonic-boom's `periodicFlush`: its timer wrote (an empty string, when nothing was
 * buffered) four times a second in every process, most of an idle platform's CPU.
 */
function stdoutDestination(): DestinationStream {
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  let flush: NodeJS.Timeout | null = null;
  return {
    write(line: string) {
      stdout.write(line);
      flush ??= setTimeout(() => {
        flush = null;
        stdout.flush();
      }, FLUSH_AFTER_MS).unref();
    },
  };
}

/** The process logger; secrets never reach it (see redactSecrets). */
export const logger = createLogger(config.logLevel, config.logFormat === 'pretty' ? pretty(stdoutDestination()) : stdoutDestination());
