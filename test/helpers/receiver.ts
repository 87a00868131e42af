import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  at: number;
}

/**
 * A real webhook receiver on 127.0.0.1 that records every request (raw bytes and headers)
 * and answers what `respond` says (default 200).
 */
export async function startReceiver(
  respond: (req: Received, n: number) => { status: number; headers?: Record<string, string>; delayMs?: number } = () => ({ status: 200 }),
) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const item = { headers: req.headers, raw, body: JSON.parse(raw.toString('utf8') || 'null'), at: Date.now() };
      received.push(item);
      const answer = respond(item, received.length);
      setTimeout(() => res.writeHead(answer.status, answer.headers).end('ok'), answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 1000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    /** Waits until `predicate` holds over what was received. */
    async until(predicate: (all: Received[]) => boolean, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met; got ${received.length} requests`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * For a `describe` block: a function that starts a receiver (as `startReceiver`) closed after
 * the block's tests.
 */
export function receiversOfBlock(): (...args: Parameters<typeof startReceiver>) => Promise<Receiver> {
  const started: Receiver[] = [];
  after(async () => {
    await Promise.all(started.splice(0).map((r) => r.close()));
  });
  return async (...args) => {
    const receiver = await startReceiver(...args);
    started.push(receiver);
    return receiver;
  };
}
