// Retries of the SDK through a real local HTTP proxy in front of a running Ringlane: the proxy
// forwards every request, except that it can lose the service's answer (after the service has
// committed the request), answer an error itself, or never answer.
import { expect } from 'chai';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { db } from '../helpers/db.js';
import { uniquePhone } from '../helpers/voice.js';
import { account, rejectionOf, runningRinglane, type Client } from './harness.js';

type Fault =
  | { kind: 'lose-answer' }
  | { kind: 'hang' }
  | { kind: 'answer'; status: number; code: string; headers?: Record<string, string> }
  | { kind: 'page'; status: number; html: string };

interface Seen {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** The service's answer, when the proxy asked it. */
  upstream?: { status: number; replayed: string | undefined };
}

/** An HTTP proxy to the service on `upstreamPort`; `fail(method, path, fault)` applies a fault to the next matching request only. */
async function startProxy(upstreamPort: number) {
  const seen: Seen[] = [];
  const faults: Array<{ method: string; path: string; fault: Fault }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url!, 'http://proxy').pathname;
      const record: Seen = { method: req.method!, path, idempotencyKey: req.headers['idempotency-key'] as string | undefined };
      seen.push(record);
      const index = faults.findIndex((f) => f.method === req.method && f.path === path);
      const fault = index === -1 ? null : faults.splice(index, 1)[0].fault;
      if (fault?.kind === 'hang') return;
      if (fault?.kind === 'page') {
        res.writeHead(fault.status, { 'content-type': 'text/html' }).end(fault.html);
        return;
      }
      if (fault?.kind === 'answer') {
        res
          .writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers })
          .end(JSON.stringify({ error: { code: fault.code, message: 'from the proxy' } }));
        return;
      }
      const { host: _host, connection: _connection, ...headers } = req.headers;
      const upstream = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          record.upstream = { status: answer.statusCode!, replayed: answer.headers['idempotent-replayed'] as string | undefined };
          // The service has answered, so it has committed: the client never hears of it.
          if (fault?.kind === 'lose-answer') {
            req.socket.destroy();
            return;
          }
          const { 'transfer-encoding': _te, connection: _c, 'keep-alive': _k, ...passed } = answer.headers;
          res.writeHead(answer.statusCode!, passed).end(Buffer.concat(body));
        });
      });
      upstream.on('error', () => req.socket.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    fail: (method: string, path: string, fault: Fault) => faults.push({ method, path, fault }),
    /** Forgets what was seen and the faults not yet applied. */
    reset: () => {
      seen.splice(0);
      faults.splice(0);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('@ringlane/sdk retries, through a real local proxy in front of a running Ringlane', function () {
  this.timeout(60_000);
  const ringlane = runningRinglane();
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  before(async () => {
    proxy = await startProxy(ringlane.port);
  });
  after(async () => proxy?.close());
  beforeEach(() => proxy.reset());

  /** A client through the proxy for a new organization with an agent and a contact (made directly, not through the proxy). */
  async function callingOrg(options: { maxRetries?: number; timeoutMs?: number } = {}) {
    const org = await account({ reseller: false });
    const direct = ringlane.client(org.key);
    const agent = await direct.agents.create({ name: 'Ava' });
    const contact = await direct.contacts.create({ name: 'Ana', phone_number: uniquePhone() });
    const client: Client = new ringlane.sdk.Ringlane({ baseUrl: proxy.url, apiKey: org.key, ...options });
    return { org, client, direct, call: { agent_id: agent.id, contact_id: contact.id } };
  }

  const callsOf = async (orgId: string) => (await db.query('SELECT id FROM calls WHERE org_id = $1', [orgId])).map((r: { id: string }) => r.id);

  it('a POST /v1/calls whose answer is lost after the service committed it is sent again with the same Idempotency-Key: exactly one call exists', async () => {
    const { org, client, direct, call } = await callingOrg();
    proxy.fail('POST', '/v1/calls', { kind: 'lose-answer' });
    const placed = await client.calls.create(call);

    const posts = proxy.seen.filter((s) => s.method === 'POST');
    expect(posts).to.have.length(2);
    expect(posts[0].idempotencyKey).to.match(/^[0-9a-f-]{36}$/);
    expect(posts[1].idempotencyKey).to.equal(posts[0].idempotencyKey);
    // The first attempt created the call; the second got the stored answer replayed.
    expect(posts.map((p) => p.upstream)).to.deep.equal([
      { status: 201, replayed: undefined },
      { status: 201, replayed: 'true' },
    ]);
    expect((await direct.calls.list()).data.map((c) => c.id)).to.deep.equal([placed.id]);
    expect(await callsOf(org.id)).to.deep.equal([placed.id]);
  });

  it("the caller's own Idempotency-Key is sent; with maxRetries 0 a lost answer is a RinglaneConnectionError, and sending the key again returns the same call", async () => {
    const { org, client, call } = await callingOrg({ maxRetries: 0 });
    const idempotencyKey = `order-4711-${Date.now()}`;
    proxy.fail('POST', '/v1/calls', { kind: 'lose-answer' });
    const lost = await rejectionOf(client.calls.create(call, { idempotencyKey }));
    expect(lost).to.be.instanceOf(ringlane.sdk.RinglaneConnectionError);
    expect(lost).to.include({ timedOut: false, method: 'POST', path: '/v1/calls' });

    const again = await client.calls.create(call, { idempotencyKey });
    expect(proxy.seen.map((s) => s.idempotencyKey)).to.deep.equal([idempotencyKey, idempotencyKey]);
    expect(await callsOf(org.id)).to.deep.equal([again.id]);
    // A different key is a different call.
    const other = await client.calls.create(call);
    expect((await callsOf(org.id)).sort()).to.deep.equal([again.id, other.id].sort());
    expect(await rejectionOf(client.calls.create(call, { idempotencyKey: 'k'.repeat(256) }))).to.be.instanceOf(RangeError);
  });

  it('429 waits for its Retry-After, 503 and 502 are retried with backoff, 409 idempotency_key_in_use too; 400, 404 and 500 are not; maxRetries bounds the attempts', async () => {
    const { client, call } = await callingOrg();
    proxy.fail('GET', '/v1/balance', { kind: 'answer', status: 429, code: 'rate_limited', headers: { 'retry-after': '1' } });
    proxy.fail('GET', '/v1/balance', { kind: 'answer', status: 503, code: 'service_unavailable' });
    expect(await client.balance.get()).to.deep.equal({ balance: '100.000000', currency: 'USD' });
    expect(proxy.seen.map((s) => s.upstream?.status ?? 'proxy')).to.deep.equal(['proxy', 'proxy', 200]);

    proxy.seen.splice(0);
    proxy.fail('POST', '/v1/calls', { kind: 'answer', status: 409, code: 'idempotency_key_in_use' });
    proxy.fail('POST', '/v1/calls', { kind: 'answer', status: 502, code: 'bad_gateway' });
    const placed = await client.calls.create(call);
    expect(placed.status).to.equal('queued');
    expect(proxy.seen).to.have.length(3);
    expect(new Set(proxy.seen.map((s) => s.idempotencyKey)).size).to.equal(1);

    proxy.seen.splice(0);
    for (let i = 0; i < 3; i++) proxy.fail('GET', '/v1/balance', { kind: 'answer', status: 503, code: 'service_unavailable' });
    const unavailable = await rejectionOf(client.balance.get());
    expect(unavailable).to.include({ status: 503, code: 'service_unavailable', message: 'from the proxy' });
    expect(proxy.seen).to.have.length(3);

    // An error page that is not the API's error shape (a proxy's) is a RinglaneError all the same.
    proxy.seen.splice(0);
    proxy.fail('GET', '/v1/balance', { kind: 'page', status: 500, html: '<h1>Internal Server Error</h1>' });
    const page = await rejectionOf(client.balance.get());
    expect(page).to.be.instanceOf(ringlane.sdk.RinglaneError);
    expect(page).to.include({ status: 500, code: 'unexpected_response', message: 'HTTP 500 Internal Server Error', requestId: null });
    expect(proxy.seen).to.have.length(1);

    proxy.seen.splice(0);
    expect(await rejectionOf(client.calls.get('call_unknown'))).to.include({ status: 404, code: 'call_not_found' });
    expect(await rejectionOf(client.contacts.create({ name: 'No number', phone_number: 'not a number' }))).to.include({ status: 400 });
    expect(proxy.seen).to.have.length(2);
  });

  it('an attempt that takes longer than timeoutMs is abandoned and retried; with no retries left it is a RinglaneConnectionError with timedOut', async () => {
    const { client, org } = await callingOrg({ timeoutMs: 300 });
    proxy.fail('GET', '/v1/organization', { kind: 'hang' });
    expect((await client.organization.get()).id).to.equal(org.id);
    expect(proxy.seen).to.have.length(2);

    proxy.fail('GET', '/v1/organization', { kind: 'hang' });
    const timedOut = await rejectionOf(client.organization.get({ maxRetries: 0 }));
    expect(timedOut).to.be.instanceOf(ringlane.sdk.RinglaneConnectionError);
    expect(timedOut).to.include({ timedOut: true });

    // The caller's own signal ends the request at once, whatever the retries left.
    proxy.fail('GET', '/v1/organization', { kind: 'hang' });
    const controller = new AbortController();
    const aborted = rejectionOf(client.organization.get({ signal: controller.signal, timeoutMs: 60_000 }));
    controller.abort(new Error('user gave up'));
    expect(await aborted).to.have.property('message', 'user gave up');
  });
});
