import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { CALL_EVENT_FIELDS } from '../../src/calls/call-event.entity.js';
import { db } from '../helpers/db.js';
import { verifyRinglaneSignature, verifyStandardWebhook } from '../../src/webhooks/verify.js';
import { asCaller, expectError, expectStatus } from '../helpers/api.js';
import { startService } from '../helpers/processes.js';
import { receiversOfBlock, startReceiver } from '../helpers/receiver.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { placeCall, startCallsWorker, stopProcess, voiceOrg, waitForCalls, type VoiceOrg } from '../helpers/voice.js';

const SECRET = 'whsec_' + Buffer.from('a test secret of 32 bytes long!!').toString('base64');

/** Starts the relay and a webhooks worker with extra settings; resolves when both run. */
async function startDelivery(env: Record<string, string> = {}): Promise<ChildProcess[]> {
  const settings = { WEBHOOK_BACKOFF_BASE_MS: '50', ...env };
  const started = await Promise.all([startService('relay', settings), startService('webhooks', settings)]);
  return started.map((s) => s.child);
}

async function endpoint(org: VoiceOrg, url: string, fields: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await asCaller(org.key, headers).post('/v1/webhook-endpoints', { name: 'Hooks', url, secret: SECRET, outcomes: [], ...fields });
  return expectStatus(res, 201).body;
}

const deliveriesOf = async (org: VoiceOrg, query = '') => expectStatus(await asCaller(org.key).get(`/v1/webhook-deliveries?limit=100${query}`), 200).body.data;

describe('signed webhook deliveries (SPEC.md §6, CONTRACT.md "Webhook delivery")', function () {
  this.timeout(60_000);
  const processes: ChildProcess[] = [];
  before(async () => {
    processes.push(await startCallsWorker(), ...(await startDelivery({ WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_BACKOFF_BASE_MS: '200' })));
  });
  after(async () => {
    await Promise.all(processes.map((p) => stopProcess(p)));
  });
  const receiver = receiversOfBlock();

  it('POSTs every event of a call, signed over the exact raw body, with a fresh delivery id per attempt', async () => {
    const hooks = await receiver();
    const org = await voiceOrg();
    await endpoint(org, hooks.url);
    const call = await placeCall(org, { duration_seconds: 3, outcome: 'positive' });
    await hooks.until((all) => all.length >= 4);
    const events = hooks.received.map((r) => r.body).sort((a, b) => a.sequence - b.sequence);
    expect(events.map((e) => [e.sequence, e.event])).to.deep.equal([
      [1, 'call.queued'],
      [2, 'call.ringing'],
      [3, 'call.in_progress'],
      [4, 'call.completed'],
    ]);
    expect(events[3]).to.include({ call_id: call.id, org_id: org.id, status: 'completed', outcome: 'positive', duration_seconds: 3 });
    const key = Buffer.from(SECRET.slice(6), 'base64');
    for (const r of hooks.received) {
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers['x-ringlane-signature']).to.equal(`sha256=${createHmac('sha256', SECRET).update(r.raw).digest('hex')}`);
      expect(r.headers['x-ringlane-delivery-id']).to.match(/^[0-9a-f-]{36}$/);
      const signed = `${String(r.headers['webhook-id'])}.${String(r.headers['webhook-timestamp'])}.${r.raw.toString('utf8')}`;
      expect(r.headers['webhook-signature']).to.equal(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.below(60);
    }
    expect(new Set(hooks.received.map((r) => r.headers['x-ringlane-delivery-id'])).size).to.equal(4);
    const log = await deliveriesOf(org, `&call_id=${call.id}`);
    await waitFor(async () => (await deliveriesOf(org, `&call_id=${call.id}`)).every((d: any) => d.status === 'succeeded'));
    expect(log).to.have.lengthOf(4);
    const one = (await deliveriesOf(org, `&call_id=${call.id}&event=call.completed`))[0];
    expect(one).to.include({ call_id: call.id, event: 'call.completed', sequence: 4, status: 'succeeded', attempt_count: 1, last_response_status: 200 });
    expect(one.attempts).to.have.lengthOf(1);
    const sent = hooks.received.find((r) => r.body.sequence === 4)!;
    expect(one.attempts[0].delivery_id).to.equal(sent.headers['x-ringlane-delivery-id']);
    expect(sent.headers['webhook-id']).to.equal(one.id);
  });

  it('customizes: aliases renamed, static keys added, custom headers sent, reserved headers win', async () => {
    const hooks = await receiver();
    const org = await voiceOrg();
    await endpoint(org, hooks.url, {
      field_aliases: { call_id: 'callId' },
      extra_payload: { source: 'crm' },
      custom_headers: { 'X-Team': 'blue', 'x-ringlane-signature': 'forged', 'Content-Type': 'text/plain', 'User-Agent': 'forged/1.0' },
    });
    await placeCall(org, { answer: 'busy' });
    await hooks.until((all) => all.length >= 2);
    for (const r of hooks.received) {
      expect(r.body).to.have.property('callId').that.is.a('string');
      expect(r.body).to.not.have.property('call_id');
      expect(r.body.source).to.equal('crm');
      expect(r.headers['x-team']).to.equal('blue');
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers['user-agent']).to.equal('Ringlane-Webhooks/1.0');
      expect(r.headers['x-ringlane-signature']).to.equal(`sha256=${createHmac('sha256', SECRET).update(r.raw).digest('hex')}`);
    }
  });

  it('delivers a swap of two fields and static keys named like Object.prototype members exactly as configured, signed', async () => {
    const hooks = await receiver();
    const org = await voiceOrg();
    const extra = { constructor: 1, toString: 'x', valueOf: true };
    await endpoint(org, hooks.url, { field_aliases: { call_id: 'event', event: 'call_id' }, extra_payload: extra });
    const call = await placeCall(org, { answer: 'busy' });
    await hooks.until((all) => all.length >= 2);
    expect(hooks.received.map((r) => r.body.call_id).sort()).to.deep.equal(['call.completed', 'call.queued']);
    for (const r of hooks.received) {
      expect(r.body).to.have.all.keys(...CALL_EVENT_FIELDS, ...Object.keys(extra));
      expect(r.body).to.deep.include({ ...extra, event: call.id, org_id: org.id });
      expect(verifyRinglaneSignature(r.raw, r.headers['x-ringlane-signature'] as string, SECRET)).to.equal(true);
      expect(verifyStandardWebhook(r.raw, r.headers, SECRET)).to.equal(true);
    }
  });

  it('an endpoint with outcomes gets only the events whose outcome is listed', async () => {
    const hooks = await receiver();
    const org = await voiceOrg();
    await endpoint(org, hooks.url, { outcomes: ['positive'] });
    const positive = await placeCall(org, { outcome: 'positive', duration_seconds: 1 });
    const negative = await placeCall(org, { outcome: 'negative', duration_seconds: 1 });
    await waitForCalls(org, [positive.id, negative.id]);
    await hooks.until((all) => all.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(hooks.received.map((r) => [r.body.call_id, r.body.event])).to.deep.equal([[positive.id, 'call.completed']]);
  });

  it('retries a failing receiver with backoff until it answers 2xx', async () => {
    const hooks = await receiver((_req, n) => ({ status: n <= 2 ? 503 : 200 }));
    const org = await voiceOrg();
    await endpoint(org, hooks.url, { outcomes: ['neutral'] });
    await placeCall(org, { duration_seconds: 1 });
    await hooks.until((all) => all.length >= 3);
    const [delivery] = await waitForDeliveries(org, (d) => d.status === 'succeeded');
    expect(delivery).to.include({ status: 'succeeded', attempt_count: 3, last_response_status: 200 });
    expect(delivery.attempts.map((a: any) => a.response_status)).to.deep.equal([503, 503, 200]);
    expect(new Set(delivery.attempts.map((a: any) => a.delivery_id)).size).to.equal(3);
    expect(new Set(hooks.received.map((r) => r.headers['webhook-id'])).size).to.equal(1);
    const gaps = hooks.received.slice(1).map((r, i) => r.at - hooks.received[i].at);
    // Base 200 ms: the retries wait 200 then 400 ms (±20%). Only lower bounds are asserted: a
    // busy machine may add any delay, but no attempt may come before its time. The second wait
    // is longer than the first can ever be (320 > 240): the backoff is exponential.
    expect(gaps[0]).to.be.at.least(160);
    expect(gaps[1]).to.be.at.least(320);
  });

  it('a 429 with Retry-After is tried again no sooner than asked, however short the backoff', async () => {
    // The backoff here is 200 ms; the receiver asks for 2 s.
    const hooks = await receiver((_req, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 }));
    const org = await voiceOrg();
    await endpoint(org, hooks.url, { outcomes: ['neutral'] });
    await placeCall(org, { duration_seconds: 1 });
    const [delivery] = await waitForDeliveries(org, (d) => d.status === 'succeeded');
    expect(delivery.attempts.map((a: any) => a.response_status)).to.deep.equal([429, 200]);
    expect(hooks.received[1].at - hooks.received[0].at).to.be.at.least(2000);
  });

  it('gives up after WEBHOOK_MAX_ATTEMPTS (3 here): failed; a 3xx is a failure and is not followed; recover and a manual retry send again', async () => {
    let answer = 302;
    const hooks = await receiver(() => ({ status: answer, headers: { location: 'http://127.0.0.1:9/elsewhere' } }));
    const org = await voiceOrg();
    await endpoint(org, hooks.url, { outcomes: ['neutral'] });
    await placeCall(org, { duration_seconds: 1 });
    const [failed] = await waitForDeliveries(org, (d) => d.status === 'failed');
    expect(failed).to.include({ attempt_count: 3, last_response_status: 302, next_attempt_at: null });
    expect(failed.attempts.every((a: any) => /redirect/.test(a.error))).to.equal(true);
    expect(hooks.received).to.have.lengthOf(3);

    answer = 200;
    const since = new Date(Date.now() - 60_000).toISOString();
    const recovered = await asCaller(org.key).post(`/v1/webhook-endpoints/${failed.endpoint_id}/recover`, { since });
    expect(recovered.status).to.equal(202);
    const [ok] = await waitForDeliveries(org, (d) => d.status === 'succeeded');
    expect(ok).to.include({ id: failed.id, attempt_count: 4 });

    const retried = await asCaller(org.key).post(`/v1/webhook-deliveries/${failed.id}/retry`, {});
    expect(retried.status).to.equal(202);
    const [again] = await waitForDeliveries(org, (d) => d.attempt_count === 5);
    expect(again).to.include({ id: failed.id, status: 'succeeded' });
    expect(hooks.received).to.have.lengthOf(5);
    expectError(await asCaller(org.key).post(`/v1/webhook-endpoints/${failed.endpoint_id}/recover`, { since: 'yesterday' }), 400, 'invalid_request');
    expectError(await asCaller(org.key).post('/v1/webhook-deliveries/dlv_nope/retry', {}), 404, 'webhook_delivery_not_found');
  });

  it('410 Gone disables the endpoint at once: that delivery fails, saying why, and nothing is sent to it until it is enabled again', async () => {
    let answer = 410;
    const hooks = await receiver(() => ({ status: answer }));
    const org = await voiceOrg({ contacts: 2 });
    const hook = await endpoint(org, hooks.url, { outcomes: ['neutral'] });
    await placeCall(org, { duration_seconds: 1 });
    const [gone] = await waitForDeliveries(org, (d) => d.status === 'failed');
    expect(gone).to.include({ attempt_count: 1, last_response_status: 410 });
    expect(gone.attempts[0].error).to.equal('HTTP 410 Gone: the endpoint is disabled');
    expect(expectStatus(await asCaller(org.key).get(`/v1/webhook-endpoints/${hook.id}`), 200).body.disabled).to.equal(true);

    // A disabled endpoint gets nothing ...
    answer = 200;
    await placeCall(org, { duration_seconds: 1 }, org.contactIds[1]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(hooks.received).to.have.lengthOf(1);
    // ... until the endpoint is enabled again; the failed delivery stays failed (recover sends it).
    expectStatus(await asCaller(org.key).patch(`/v1/webhook-endpoints/${hook.id}`, { disabled: false }), 200);
    await placeCall(org, { duration_seconds: 1 }, org.contactIds[1]);
    await waitForDeliveries(org, (d) => d.status === 'succeeded');
    expect((await deliveriesOf(org)).find((d: { id: string }) => d.id === gone.id).status).to.equal('failed');
  });

  it('an endpoint’s tenant gets only its tenant’s events', async () => {
    const hooksA = await receiver();
    const hooksB = await receiver();
    const owner = await reseller();
    const [a, b] = [await createTenant(owner), await createTenant(owner)];
    for (const [tenant, hooks] of [
      [a, hooksA],
      [b, hooksB],
    ] as const) {
      const inside = owner.inside(tenant.id);
      expectStatus(await inside.post('/v1/webhook-endpoints', { name: 'T', url: hooks.url, secret: SECRET, outcomes: [] }), 201);
    }
    const inside = owner.inside(a.id);
    const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
    const contact = expectStatus(await inside.post('/v1/contacts', { name: 'X', phone_number: '+14155550177' }), 201).body;
    const call = expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate: { answer: 'busy' } }), 201).body;
    await hooksA.until((all) => all.length >= 2);
    await new Promise((r) => setTimeout(r, 500));
    expect(hooksA.received.every((r) => r.body.call_id === call.id && r.body.org_id === a.id)).to.equal(true);
    expect(hooksB.received).to.deep.equal([]);
  });

  async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function waitForDeliveries(org: VoiceOrg, predicate: (d: any) => boolean) {
    let found: any[] = [];
    await waitFor(async () => (found = (await deliveriesOf(org)).filter(predicate)).length > 0);
    return found;
  }
});

describe('SSRF guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false)', function () {
  this.timeout(60_000);
  const processes: ChildProcess[] = [];
  after(async () => {
    await Promise.all(processes.map((p) => stopProcess(p)));
  });

  it('refuses a receiver on a private address and records why; nothing reaches it', async () => {
    processes.push(await startCallsWorker(), ...(await startDelivery({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_MAX_ATTEMPTS: '1' })));
    const hooks = await startReceiver();
    try {
      const org = await voiceOrg();
      await endpoint(org, hooks.url, { outcomes: ['neutral'] });
      await placeCall(org, { duration_seconds: 1 });
      let delivery: any;
      const deadline = Date.now() + 20_000;
      while (!(delivery = (await deliveriesOf(org)).find((d: any) => d.status === 'failed'))) {
        if (Date.now() > deadline) throw new Error('no failed delivery');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(delivery.attempts[0].error).to.match(/refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1/);
      expect(delivery.attempts[0].response_status).to.equal(null);
      expect(hooks.received).to.deep.equal([]);
      const [row] = await db.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = $1', [delivery.id]);
      expect(row.n).to.equal(1);
    } finally {
      await hooks.close();
    }
  });
});
