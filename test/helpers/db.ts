import { config } from '../../src/config.js';
import { openDatabase } from '../../src/runtime.js';

/**
 * This run's database (see env.ts), for the runtimes tests build and for checking rows directly;
 * connected and closed by the root hooks.
 */
export const db = openDatabase();

/** `url` naming the database `name`, as `user` when given. */
function renamed(url: string, name: string, user?: string): string {
  const other = new URL(url);
  other.pathname = `/${name}`;
  if (user) other.username = user;
  return other.toString();
}

/**
 * The environment that points a service process at the database `name` (as `user`, when given)
 * the way this run reaches its own: DATABASE_URL, and in the PgBouncer pass DATABASE_DIRECT_URL.
 */
export function databaseEnv(name: string, user?: string): Record<string, string> {
  return {
    DATABASE_URL: renamed(config.databaseUrl, name, user),
    ...(config.databasePooled ? { DATABASE_DIRECT_URL: renamed(config.databaseDirectUrl, name, user) } : {}),
  };
}
