import pg from 'pg';
import { logger } from './logger.js';

export interface Listener {
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called after every reconnection: notifications sent while the connection was down are lost. */
  onReconnect?: () => void;
  applicationName?: string;
  /** First and longest wait between reconnection attempts (doubling in between). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/** Reconnects with backoff for as long as it takes; only a wake-up, so users also poll. The first connect is awaited (fail fast). */
export async function listen(url: string, channel: string, onNotify: (payload: string) => void, options: ListenOptions = {}): Promise<Listener> {
  const { minDelayMs = 100, maxDelayMs = 5_000 } = options;
  let client: pg.Client | null = null;
  let closed = false;
  let cancelWait: (() => void) | null = null;

  const connect = async (): Promise<pg.Client> => {
    // Keepalive notices a server that vanished without closing the socket in seconds, not two hours.
    const next = new pg.Client({
      connectionString: url,
      application_name: options.applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 10_000,
    });
    // Without a listener, an 'error' on the socket would end the process.
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
