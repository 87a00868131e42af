/** How log lines are written: JSON for collectors, or one readable coloured line per event for a person. */
export type LogFormat = 'json' | 'pretty';

/**
 * Readable lines only where a person reads them: a terminal, outside production. Under `npm start`
 * the processes write to the supervisor's pipes, so the supervisor, which knows whether its own
 * output is a terminal, decides for them (`LOG_FORMAT`).
 */
export function defaultLogFormat(nodeEnv: string, isTTY: boolean | undefined): LogFormat {
  return isTTY === true && nodeEnv !== 'production' ? 'pretty' : 'json';
}

const LEVELS: Record<number, { name: string; colour: number }> = {
  10: { name: 'TRACE', colour: 90 },
  20: { name: 'DEBUG', colour: 36 },
  30: { name: 'INFO ', colour: 32 },
  40: { name: 'WARN ', colour: 33 },
  50: { name: 'ERROR', colour: 31 },
  60: { name: 'FATAL', colour: 35 },
};

/** Fields every line has, shown in the line's head (time, level, message) or not at all. */
const HEAD = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

const paint = (colour: number, text: string) => `\x1b[${colour}m${text}\x1b[0m`;

/** A value as `key=value` shows it: bare when it reads unambiguously, JSON otherwise. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /^[\w.:/@+-]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

/** An error as one line: its type, message and the place it was thrown (the first frame of its stack). */
function shownError(err: { type?: unknown; message?: unknown; stack?: unknown; code?: unknown }): string {
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value));
  const frame = typeof err.stack === 'string' ? /\n\s+at (.+)/.exec(err.stack)?.[1] : undefined;
  const code = err.code === undefined ? '' : ` [${text(err.code)}]`;
  return JSON.stringify(`${err.type === undefined ? 'Error' : text(err.type)}${code}: ${text(err.message ?? '')}${frame ? ` (at ${frame})` : ''}`);
}

/**
 * One pino JSON line as a readable one: `12:01:02.345 INFO  message key=value ...`, the level
 * coloured, the fields dimmed after the message. Anything that is not a pino line passes as is.
 */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  if (typeof entry !== 'object' || entry === null || typeof entry.level !== 'number') return json;
  const level = LEVELS[entry.level] ?? { name: String(entry.level).padEnd(5), colour: 0 };
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const fields: string[] = [];
  for (const [name, value] of Object.entries(entry)) {
    if (HEAD.has(name)) continue;
    const text = name === 'err' && value !== null && typeof value === 'object' ? shownError(value) : shown(value);
    fields.push(`${name}=${text}`);
  }
  const message = typeof entry.msg === 'string' ? entry.msg : '';
  return `${paint(90, time)} ${paint(level.colour, level.name)} ${message}${fields.length ? ` ${paint(2, fields.join(' '))}` : ''}\n`;
}
