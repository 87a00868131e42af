import pg from 'pg';
import { logger } from './logger.js';

export interface Listener {
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called after every reconnection: notifications sent while the connection was down are lost. */
  onReconnect?: () => void;
  /** The connection's name in pg_stat_activity. */
  applicationName?: string;
  /** First and longest wait between reconnection attempts (doubling in between). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * A dedicated connection that LISTENs on `channel` and calls `onNotify` for every notification.
 * When the server drops it (restart, failover, pg_terminate_backend) it reconnects with backoff
 * and LISTENs again, for as long as it takes: a listener is only a wake-up, so whoever uses one
 * must also poll (the relay does) and loses nothing while it reconnects. The first connection
 * is awaited, so a server that is away at start fails the start.
 */
export async function listen(url: string, channel: string, onNotify: (payload: string) => void, options: ListenOptions = {}): Promise<Listener> {
  const { minDelayMs = 100, maxDelayMs = 5_000 } = options;
  let client: pg.Client | null = null;
  let closed = false;
  let cancelWait: (() => void) | null = null;

  const connect = async (): Promise<pg.Client> => {
    // TCP keepalive: a server that vanishes without closing the socket (a failover that moves
    // the address) is noticed in seconds, not after the kernel's two hours; and an attempt to
    // reach one that does not answer gives up, so the next attempt can be made.
    const next = new pg.Client({
      connectionString: url,
      application_name: options.applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 10_000,
    });
    // Without a listener an 'error' (e.g. "terminating connection due to administrator command")
    // is thrown from the socket's event handler and ends the process; 'end' follows it.
    next.on('error', (err) => logger.warn({ err: err.message, channel }, 'LISTEN connection lost; reconnecting'));
    next.on('notification', (message) => onNotify(message.payload ?? ''));
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      await next.end().catch(() => undefined);
      throw err;
    }
    next.once('end', () => {
      if (client !== next || closed) return;
      client = null;
      void reconnect();
    });
    return next;
  };

  const reconnect = async () => {
    for (let attempt = 0; !closed; attempt++) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(maxDelayMs, minDelayMs * 2 ** attempt));
        cancelWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      cancelWait = null;
      if (closed) return;
      try {
        client = await connect();
        if (closed) {
          await client.end();
          return;
        }
        logger.info({ channel, attempt: attempt + 1 }, 'LISTEN connection re-established');
        options.onReconnect?.();
        return;
      } catch (err) {
        logger.warn({ err: (err as Error).message, channel, attempt: attempt + 1 }, 'LISTEN reconnection failed; retrying');
      }
    }
  };

  client = await connect();
  return {
    async close() {
      closed = true;
      cancelWait?.();
      const last = client;
      client = null;
      await last?.end();
    },
  };
}
