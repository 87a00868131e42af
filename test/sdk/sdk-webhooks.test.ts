// verifyWebhook over real deliveries: a running Ringlane (API, calls, relay and webhooks
// processes) delivers to a real receiver, which records the raw bytes and headers; the SDK's
// function verifies them by either scheme, also across a secret rotation, and refuses them altered.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startReceiver, type Received, type Receiver } from '../helpers/receiver.js';
import { uniquePhone } from '../helpers/voice.js';
import type { WebhookHeaders, WebhookScheme } from '../../sdk/src/index.js';
import { eventually } from '../helpers/processes.js';
import { account, runningRinglane, type Client } from './harness.js';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const STANDARD_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

/** The headers of `r` without the Standard Webhooks ones: only `X-Ringlane-Signature` is left to verify. */
const ringlaneOnly = (r: Received) => Object.fromEntries(Object.entries(r.headers).filter(([name]) => !STANDARD_HEADERS.includes(name)));

describe('@ringlane/sdk verifyWebhook on real deliveries', function () {
  this.timeout(60_000);
  const ringlane = runningRinglane(['calls', 'relay', 'webhooks']);
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(async () => receiver?.close());

  /** An organization with an agent and a contact, and an endpoint at the receiver signing with `secret`. */
  async function receivingOrg(secret: string) {
    const org = await account({ reseller: false });
    const client = ringlane.client(org.key);
    const agent = await client.agents.create({ name: 'Ava' });
    const contact = await client.contacts.create({ name: 'Ana', phone_number: uniquePhone() });
    const endpoint = await client.webhookEndpoints.create({ name: 'receiver', url: receiver.url, secret, outcomes: [] });
    return { client, endpoint, call: { agent_id: agent.id, contact_id: contact.id } };
  }

  /** Places a call and waits for its four deliveries, in sequence order. */
  async function deliveriesOfACall(client: Client, call: { agent_id: string; contact_id: string }) {
    const { id } = await client.calls.create({ ...call, simulate: { duration_seconds: 1 } });
    const ofCall = () => receiver.received.filter((r) => r.body?.call_id === id);
    await receiver
      .until(() => ofCall().length >= 4)
      .catch((err: Error) => {
        throw new Error(`${err.message}\n${ringlane.tails()}`);
      });
    return { id, deliveries: ofCall().sort((a, b) => a.body.sequence - b.body.sequence) };
  }

  /** What verifyWebhook says of a delivery, as the receiver would have said when it arrived: the event, or the error's reason. */
  function verdict(raw: Buffer | string, headers: WebhookHeaders, secret: string | string[], at: number, options: { schemes?: WebhookScheme[] } = {}) {
    try {
      return ringlane.sdk.verifyWebhook(raw, headers, secret, { now: new Date(at), ...options });
    } catch (err) {
      if (err instanceof ringlane.sdk.WebhookVerificationError) return err.reason;
      throw err;
    }
  }

  it("verifies a call's deliveries by either signature and returns the typed call events; refuses tampered ones, a wrong secret, a stale timestamp", async () => {
    const secret = newSecret();
    const { client, call } = await receivingOrg(secret);
    const { id, deliveries } = await deliveriesOfACall(client, call);

    for (const [index, r] of deliveries.entries()) {
      const event = ringlane.sdk.verifyWebhook(r.raw, r.headers, secret, { now: new Date(r.at) });
      expect(event).to.deep.equal(r.body);
      if (!ringlane.sdk.isCallEvent(event)) throw new Error(`not a call event: ${event.event}`);
      // Typed: these compile only on a CallEvent.
      const sequence: number = event.sequence;
      const callId: string = event.call_id;
      expect([callId, sequence, event.event]).to.deep.equal([id, index + 1, ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'][index]]);
      expect(verdict(r.raw, ringlaneOnly(r), secret, r.at)).to.deep.equal(r.body);
      // A fetch Headers object and the body as a string verify the same.
      expect(verdict(r.raw.toString('utf8'), new Headers(r.headers as Record<string, string>), secret, r.at)).to.deep.equal(r.body);
    }

    const [r] = deliveries;
    const tampered = Buffer.from(r.raw.toString('utf8').replace(`"sequence":1`, `"sequence":2`));
    expect(tampered.equals(r.raw)).to.equal(false);
    expect(verdict(tampered, r.headers, secret, r.at)).to.equal('invalid_signature');
    expect(verdict(tampered, ringlaneOnly(r), secret, r.at)).to.equal('invalid_signature');
    expect(verdict(r.raw, { ...r.headers, 'webhook-id': 'dlv_another' }, secret, r.at)).to.equal('invalid_signature');
    expect(verdict(r.raw, r.headers, newSecret(), r.at)).to.equal('invalid_signature');
    expect(verdict(r.raw, ringlaneOnly(r), newSecret(), r.at)).to.equal('invalid_signature');
    // A captured delivery replayed 6 minutes later: outside the default 5-minute tolerance.
    expect(verdict(r.raw, r.headers, secret, r.at + 360_000)).to.equal('timestamp_out_of_tolerance');
    expect(ringlane.sdk.verifyWebhook(r.raw, r.headers, secret, { now: new Date(r.at + 360_000), toleranceSeconds: 600 })).to.deep.equal(r.body);
    // ... and replayed without its Standard Webhooks headers: refused when only that scheme is accepted.
    expect(verdict(r.raw, ringlaneOnly(r), secret, r.at, { schemes: ['standard-webhooks'] })).to.equal('missing_signature');
    expect(verdict(r.raw, { 'content-type': 'application/json' }, secret, r.at)).to.equal('missing_signature');

    // The delivery log through the SDK (an attempt is recorded shortly after its answer); a retry is
    // one more attempt, signed like the first.
    const logged = await eventually(
      async () => await client.webhookDeliveries.list({ call_id: id }),
      (page) => page.data.length === 4 && page.data.every((d) => d.status === 'succeeded'),
      'the four deliveries logged as succeeded',
    );
    expect(logged.data.map((d) => d.sequence)).to.have.members([1, 2, 3, 4]);
    const first = logged.data.find((d) => d.sequence === 1)!;
    expect(await client.webhookDeliveries.get(first.id)).to.deep.include({ id: first.id, event: 'call.queued' });
    await client.webhookDeliveries.retry(first.id);
    const resent = () => receiver.received.filter((d) => d.headers['webhook-id'] === first.id);
    await receiver.until(() => resent().length === 2);
    const again = resent()[1];
    expect(verdict(again.raw, again.headers, secret, again.at)).to.deep.equal(r.body);
  });

  it('during a rotation overlap a receiver with the old secret, the new one or both accepts every delivery; X-Ringlane-Signature needs the new one', async () => {
    const oldSecret = newSecret();
    const { client, endpoint, call } = await receivingOrg(oldSecret);
    const newOne = newSecret();
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id, { secret: newOne, overlap_seconds: 600 });
    expect(rotated.secret_rotation).to.not.equal(null);

    const { deliveries } = await deliveriesOfACall(client, call);
    for (const r of deliveries) {
      expect((r.headers['webhook-signature'] as string).split(' ')).to.have.length(2);
      for (const secrets of [oldSecret, newOne, [newOne, oldSecret]]) expect(verdict(r.raw, r.headers, secrets, r.at)).to.deep.equal(r.body);
      expect(verdict(r.raw, ringlaneOnly(r), newOne, r.at)).to.deep.equal(r.body);
      expect(verdict(r.raw, ringlaneOnly(r), [newOne, oldSecret], r.at)).to.deep.equal(r.body);
      expect(verdict(r.raw, ringlaneOnly(r), oldSecret, r.at)).to.equal('invalid_signature');
      expect(verdict(r.raw, r.headers, newSecret(), r.at)).to.equal('invalid_signature');
    }

    // The overlap ended: the old secret verifies nothing any more.
    await client.webhookEndpoints.rotateSecret(endpoint.id, { secret: newOne, overlap_seconds: 0 });
    const after = (await deliveriesOfACall(client, call)).deliveries;
    for (const r of after) {
      expect(verdict(r.raw, r.headers, newOne, r.at)).to.deep.equal(r.body);
      expect(verdict(r.raw, r.headers, oldSecret, r.at)).to.equal('invalid_signature');
    }
  });

  it("returns an operational event typed by its name: a reseller's endpoint listing tenant.disabled gets one when a tenant is disabled", async () => {
    const secret = 'a plain secret, not whsec_';
    const client = ringlane.client((await account()).key);
    await client.webhookEndpoints.create({ name: 'ops', url: receiver.url, secret, outcomes: [], event_types: ['tenant.disabled'] });
    const tenant = await client.tenants.create({ name: 'Glow Salon', timezone: 'Europe/London', industry: 'salon' });
    await client.tenants.update(tenant.id, { disabled: true });
    const ofTenant = () => receiver.received.filter((r) => r.body?.tenant_id === tenant.id);
    await eventually(
      async () => ofTenant(),
      (found) => found.length === 1,
      'the tenant.disabled delivery',
    );
    const [r] = ofTenant();
    const event = ringlane.sdk.verifyWebhook(r.raw, r.headers, secret, { now: new Date(r.at) });
    if (event.event !== 'tenant.disabled') throw new Error(`unexpected ${event.event}`);
    // Narrowed by `event`: tenant_id exists on this member of the union only.
    const tenantId: string = event.tenant_id;
    expect(tenantId).to.equal(tenant.id);
    expect(ringlane.sdk.isCallEvent(event)).to.equal(false);
    expect(verdict(r.raw, ringlaneOnly(r), secret, r.at)).to.deep.equal(r.body);
  });
});
