// `npm start`: everything in one terminal. Finds or starts Postgres, checks Redis, applies
// migrations, then runs the API and every worker process of the Procfile, and stops them
// all together (SIGTERM, so each finishes its in-flight work) on Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import readline from 'node:readline';
import exitHook from 'async-exit-hook';
import { Redis } from 'ioredis';
import { config, DEFAULT_DATABASE_URL } from '../src/config.js';
import { ensureDatabase, runMigrations } from '../src/lib/migrate.js';
import { answers, startEmbeddedPostgres } from './local-postgres.js';

const projectDir = process.cwd();
const say = (line: string) => process.stdout.write(`[start] ${line}\n`);

async function resolveDatabase(): Promise<{ url: string; stop?: () => Promise<void> }> {
  if (config.databaseUrlExplicit) return { url: config.databaseUrl };
  const local = new URL(DEFAULT_DATABASE_URL);
  if (await answers(local.hostname, Number(local.port))) {
    say(`using the Postgres server at ${local.host}`);
    return { url: DEFAULT_DATABASE_URL };
  }
  say(`no DATABASE_URL and no Postgres at ${local.host}: starting the embedded Postgres (data in .data/postgres)`);
  return startEmbeddedPostgres(projectDir);
}

async function checkRedis(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(
      `Redis is not answering at ${url} (${(err as Error).message}).\n` +
        'Ringlane needs a Redis server (6.2 or newer) for its queues: install one (e.g. `apt-get install redis-server`) ' +
        'and start it, or set REDIS_URL to one that runs.',
    );
  } finally {
    redis.disconnect();
  }
}

/** The Procfile's process lines other than `release`. */
function procfileProcesses(): Array<{ name: string; command: string }> {
  return readFileSync(`${projectDir}/Procfile`, 'utf8')
    .split('\n')
    .map((line) => /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null && m[1] !== 'release')
    .map((m) => ({ name: m[1], command: m[2] }));
}

function prefixLines(stream: NodeJS.ReadableStream, name: string, out: NodeJS.WritableStream): void {
  readline.createInterface({ input: stream }).on('line', (line) => out.write(`[${name}] ${line}\n`));
}

async function main(): Promise<void> {
  await checkRedis(config.redisUrl);
  const database = await resolveDatabase();
  if (!config.databaseUrlExplicit) await ensureDatabase(database.url);
  const applied = await runMigrations(database.url);
  say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema is up to date');

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const stopChildren = async () => {
    stopping = true;
    say('stopping every process (each finishes its in-flight work)');
    const closed = [...children.values()].map(
      (child) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('close', () => resolve()))),
    );
    for (const child of children.values()) child.kill('SIGTERM');
    await Promise.all(closed);
  };
  // The embedded Postgres library exits the process on SIGINT/SIGTERM through async-exit-hook
  // (stopping its server); hooking the same way makes that exit wait for our processes too.
  exitHook.forceExitTimeout(30_000);
  exitHook((done) => void stopChildren().finally(done));

  for (const { name, command } of procfileProcesses()) {
    // `exec` makes the shell become the process, so signals reach it rather than the shell.
    const child = spawn(`exec ${command}`, { shell: true, env: { ...process.env, DATABASE_URL: database.url }, stdio: ['ignore', 'pipe', 'pipe'] });
    prefixLines(child.stdout!, name, process.stdout);
    prefixLines(child.stderr!, name, process.stderr);
    child.on('exit', (code, signal) => {
      if (stopping) return;
      say(`${name} exited (${signal ?? `code ${code}`}); stopping the others`);
      process.exitCode = 1;
      process.kill(process.pid, 'SIGTERM');
    });
    children.set(name, child);
  }
  say(`running ${[...children.keys()].join(', ')}; the API listens on http://127.0.0.1:${config.port} (Ctrl-C stops all)`);
}

main().catch((err) => {
  process.stderr.write(`[start] cannot start Ringlane: ${(err as Error).message}\n`);
  process.exit(1);
});
