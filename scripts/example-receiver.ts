/**
 * An example receiver of call-event webhooks on node:http and the SDK's `verifyWebhook`
 * (sdk/README.md, "Verifying webhooks"); the rules it shows are in docs/webhooks.md, "Receiving
 * webhooks". In your own project, install the SDK and import from `@ringlane/sdk` instead of
 * `../sdk/src/index.js`. Call events only: operational events have no call_id or sequence and get
 * 400. Bookkeeping is in memory here; store each event durably before answering 2xx in a real receiver.
 *
 *   RINGLANE_WEBHOOK_SECRET='...' PORT=4000 npx tsx scripts/example-receiver.ts
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { isCallEvent, verifyWebhook, WebhookVerificationError, type CallEvent, type WebhookEvent } from '../sdk/src/index.js';

export type { CallEvent };

export interface ReceiverOptions {
  /** The endpoint's secret, as sent in `POST /v1/webhook-endpoints`. */
  secret: string;
  /** Runs after the response; `current` is false when a later event of the call came first: do not roll state back. */
  handle: (event: CallEvent, current: boolean) => void | Promise<void>;
  /** Larger bodies are refused with 413. Default 1 MB. */
  maxBodyBytes?: number;
}

class BodyTooLarge extends Error {}

/** The exact bytes of the request body: the signature covers these, not re-serialized JSON. */
async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The call event of a delivery whose fields are as Ringlane names them, else null (an operational event, or renamed fields). */
const asCallEvent = (event: WebhookEvent): CallEvent | null =>
  isCallEvent(event) && typeof event.call_id === 'string' && Number.isInteger(event.sequence) ? event : null;

/** An HTTP server accepting signed Ringlane deliveries on any path. */
export function createReceiver({ secret, handle, maxBodyBytes = 1_000_000 }: ReceiverOptions): Server {
  /** `call_id:sequence` of every event accepted: a redelivery is acknowledged and dropped. */
  const seen = new Set<string>();
  const latest = new Map<string, number>();

  async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body?: string) => {
      res.writeHead(status, body ? { 'Content-Type': 'text/plain' } : {}).end(body);
    };
    if (req.method !== 'POST') return answer(405, 'POST only\n');
    let raw: Buffer;
    try {
      raw = await readRawBody(req, maxBodyBytes);
    } catch (err) {
      return answer(err instanceof BodyTooLarge ? 413 : 400, 'unreadable body\n');
    }
    let verified: WebhookEvent;
    try {
      // Either signature, the Standard Webhooks one with its timestamp tolerance (5 minutes).
      verified = verifyWebhook(raw, req.headers, secret);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      // A signed body that is not a JSON object is no event; anything else did not come from Ringlane.
      return err.reason === 'invalid_body' ? answer(400, 'not a call event\n') : answer(401, 'bad signature\n');
    }
    const event = asCallEvent(verified);
    if (!event) return answer(400, 'not a call event\n');

    const key = `${event.call_id}:${event.sequence}`;
    // Acknowledge duplicates too: a non-2xx answer would only make Ringlane retry.
    if (seen.has(key)) return answer(204);
    seen.add(key);
    const current = event.sequence > (latest.get(event.call_id) ?? 0);
    if (current) latest.set(event.call_id, event.sequence);
    answer(204);

    // The work happens after the answer: a slow handler never makes a delivery time out.
    setImmediate(() => {
      Promise.resolve()
        .then(() => handle(event, current))
        .catch((err: unknown) => console.error(`handling ${key} failed:`, err));
    });
  }

  // node:http ignores what a listener returns; receive() answers every request itself.
  return createServer((req, res) => void receive(req, res));
}

function main(): void {
  const secret = process.env.RINGLANE_WEBHOOK_SECRET;
  if (!secret) {
    console.error('Set RINGLANE_WEBHOOK_SECRET to the secret of your webhook endpoint.');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4000);
  const server = createReceiver({
    secret,
    handle(event, current) {
      const state = current ? `${event.status} ${event.outcome ?? ''}`.trim() : '(late: an older event, state unchanged)';
      console.log(`${event.call_id} #${event.sequence} ${event.event} ${state}`);
    },
  });
  server.listen(port, () => console.log(`Receiving Ringlane webhooks on http://127.0.0.1:${port}/`));
  process.once('SIGINT', () => server.close());
  process.once('SIGTERM', () => server.close());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
