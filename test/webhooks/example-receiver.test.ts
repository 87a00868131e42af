import { expect } from 'chai';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createReceiver, type CallEvent } from '../../scripts/example-receiver.js';
import { signRinglane } from '../../src/webhooks/verify.js';

const SECRET = 'receiver-test-secret';

describe('the example receiver (scripts/example-receiver.ts, docs/webhooks.md "Receiving webhooks")', () => {
  let server: Server;
  let url: string;
  let handled: Array<{ key: string; current: boolean }>;
  let waiters: Array<() => void>;

  beforeEach(async () => {
    handled = [];
    waiters = [];
    server = createReceiver({
      secret: SECRET,
      handle(event: CallEvent, current: boolean) {
        handled.push({ key: `${event.call_id}:${event.sequence}`, current });
        waiters.splice(0).forEach((wake) => wake());
      },
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });

  afterEach(async () => {
    server.close();
    await once(server, 'close');
  });

  const untilHandled = async (n: number) => {
    while (handled.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
  };

  const deliver = (body: string, signature: string | null = signRinglane(body, SECRET)) =>
    fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(signature === null ? {} : { 'X-Ringlane-Signature': signature }) },
      body,
    });

  const event = (sequence: number, callId = 'call_1', name = 'call.ringing') => JSON.stringify({ event: name, call_id: callId, sequence, status: 'ringing' });

  it('accepts a correctly signed event with 2xx and handles it', async () => {
    const res = await deliver(event(1));
    expect(res.status).to.equal(204);
    await untilHandled(1);
    expect(handled).to.deep.equal([{ key: 'call_1:1', current: true }]);
  });

  it('refuses a missing or wrong signature, or a tampered body, with 401', async () => {
    expect((await deliver(event(1), null)).status).to.equal(401);
    expect((await deliver(event(1), signRinglane(event(1), 'another-secret'))).status).to.equal(401);
    expect((await deliver(event(1).replace('ringing', 'completed'), signRinglane(event(1), SECRET))).status).to.equal(401);
    expect(handled).to.deep.equal([]);
  });

  it('handles a redelivered event once, acknowledging both', async () => {
    expect((await deliver(event(1))).status).to.equal(204);
    expect((await deliver(event(1))).status).to.equal(204);
    expect((await deliver(event(2))).status).to.equal(204);
    await untilHandled(2);
    expect(handled.map((h) => h.key)).to.deep.equal(['call_1:1', 'call_1:2']);
  });

  it('marks an event that arrives after a later one of its call as not current', async () => {
    await deliver(event(3, 'call_2', 'call.in_progress'));
    await deliver(event(2, 'call_2'));
    await deliver(event(1, 'call_3'));
    await untilHandled(3);
    expect(handled).to.deep.equal([
      { key: 'call_2:3', current: true },
      { key: 'call_2:2', current: false },
      { key: 'call_3:1', current: true },
    ]);
  });

  it('answers 400 to a signed body that is not a call event, and 405 to other methods', async () => {
    expect((await deliver('not json')).status).to.equal(400);
    expect((await deliver(JSON.stringify({ call_id: 'x' }))).status).to.equal(400);
    expect((await fetch(url)).status).to.equal(405);
    expect(handled).to.deep.equal([]);
  });
});
