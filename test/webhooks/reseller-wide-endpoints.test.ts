// CONTRACT.md §5 "Reseller-wide webhook endpoints": a reseller's endpoint with `tenant_events: "all"`
// gets its tenants' events, signed with its own secret, each naming its tenant in the reserved header
// X-Ringlane-Tenant-Id. Real calls, relay, webhooks worker and HTTP receivers that check every
// signature (computed here with node:crypto, not with the module under test).
import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { app, asCaller, createOrg, expectError, expectStatus, operator, operatorPatchOrg, walkList, type Caller } from '../helpers/api.js';
import { expectInvalid } from '../helpers/org-resource.js';
import { startService, waitUntil } from '../helpers/processes.js';
import { receiversOfBlock, type Received, type Receiver } from '../helpers/receiver.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { startCallsWorker, stopProcess, uniquePhone } from '../helpers/voice.js';

const PATH = '/v1/webhook-endpoints';
const SECRET = 'whsec_' + Buffer.from('the reseller-wide endpoint key!!').toString('base64');
const TENANT_SECRET = "a tenant endpoint's own secret";

const endpointBody = (fields: Record<string, unknown> = {}) => ({
  name: 'Hooks',
  url: 'https://hooks.example.com/ringlane',
  secret: SECRET,
  outcomes: [],
  ...fields,
});

/** POST /v1/webhook-endpoints; expects 201. */
async function createEndpoint(caller: Caller, fields: Record<string, unknown> = {}) {
  return expectStatus(await caller.post(PATH, endpointBody(fields)), 201).body;
}

/** Whether `r` carries both signatures of CONTRACT.md, made with `secret`. */
function signedWith(r: Received, secret: string): boolean {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
  const signed = `${String(r.headers['webhook-id'])}.${String(r.headers['webhook-timestamp'])}.${r.raw.toString('utf8')}`;
  return (
    r.headers['x-ringlane-signature'] === `sha256=${createHmac('sha256', secret).update(r.raw).digest('hex')}` &&
    r.headers['webhook-signature'] === `v1,${createHmac('sha256', key).update(signed).digest('base64')}`
  );
}

/** The X-Ringlane-Tenant-Id a request carried, or `no-header`. */
const tenantHeader = (r: Received) => String(r.headers['x-ringlane-tenant-id'] ?? 'no-header');

/** What a receiver got, one line per request: `call event org tenant-header`, sorted. */
const arrivals = (receiver: Receiver) => receiver.received.map((r) => `${r.body.call_id ?? '-'} ${r.body.event} ${r.body.org_id} ${tenantHeader(r)}`).sort();

/** The lines `arrivals` shows for a busy call (call.queued, then call.completed). */
const busyCall = (callId: string, orgId: string, tenantId: string | null) =>
  ['call.completed', 'call.queued'].map((event) => `${callId} ${event} ${orgId} ${tenantId ?? 'no-header'}`);

/** Whether `receiver` got the call.completed of `callId`. */
const ended = (receiver: Receiver, callId: string) => receiver.until((all) => all.some((r) => r.body.call_id === callId && r.body.event === 'call.completed'));

/** A function placing calls as `caller` (a reseller as itself or inside a tenant) to a contact of its own. */
async function dialer(caller: Caller) {
  const [starter] = expectStatus(await caller.get('/v1/agents'), 200).body.data;
  const agent = starter ?? expectStatus(await caller.post('/v1/agents', { name: 'Ava' }), 201).body;
  const contact = expectStatus(await caller.post('/v1/contacts', { name: 'Cleo', phone_number: uniquePhone() }), 201).body;
  return async (simulate: Record<string, unknown> = { answer: 'busy' }) =>
    expectStatus(await caller.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate }), 201).body;
}

/** Every delivery `caller` lists (newest first), with an optional query such as `tenant_id=...`. */
const deliveries = async (caller: Caller, query = '') => (await walkList(caller, `/v1/webhook-deliveries${query ? `?${query}` : ''}`, 100)).items;

/** `endpoint call tenant` of each delivery, sorted. */
const deliveryLines = (list: any[]) => list.map((d) => `${d.endpoint_id} ${d.call_id} ${d.tenant_id}`).sort();

const UNKNOWN_TENANT = `org_${'0'.repeat(22)}`;

describe('reseller-wide webhook endpoints: the fields (CONTRACT.md §5)', () => {
  let owner: Reseller;
  let tenantIds: string[];
  before(async () => {
    owner = await reseller();
    tenantIds = [(await createTenant(owner)).id, (await createTenant(owner)).id];
  });

  it('every endpoint shows tenant_events "none" and tenant_ids [] by default, in every answer', async () => {
    const org = await createOrg();
    for (const caller of [asCaller(org.key), owner.as]) {
      const endpoint = await createEndpoint(caller);
      expect(endpoint).to.deep.include({ tenant_events: 'none', tenant_ids: [] });
      const one = `${PATH}/${endpoint.id}`;
      expect(expectStatus(await caller.get(one), 200).body).to.deep.equal(endpoint);
      expect(expectStatus(await caller.patch(one, { name: 'Renamed' }), 200).body).to.deep.include({ tenant_events: 'none', tenant_ids: [] });
      const listed = (await walkList(caller, PATH, 100)).items.find((e) => e.id === endpoint.id);
      expect(listed).to.deep.include({ tenant_events: 'none', tenant_ids: [] });
    }
  });

  it('a reseller sets them on create and PATCH: "all" with [] (every tenant) or with some of its tenants', async () => {
    const all = await createEndpoint(owner.as, { tenant_events: 'all' });
    expect(all).to.deep.include({ tenant_events: 'all', tenant_ids: [] });
    const some = await createEndpoint(owner.as, { tenant_events: 'all', tenant_ids: [tenantIds[1]] });
    expect(some).to.deep.include({ tenant_events: 'all', tenant_ids: [tenantIds[1]] });
    const one = `${PATH}/${some.id}`;
    // tenant_ids alone keeps the stored "all".
    expect(expectStatus(await owner.as.patch(one, { tenant_ids: tenantIds }), 200).body).to.deep.include({ tenant_events: 'all', tenant_ids: tenantIds });
    expect(expectStatus(await owner.as.get(one), 200).body).to.deep.include({ tenant_events: 'all', tenant_ids: tenantIds });
    expect(expectStatus(await owner.as.patch(one, { tenant_ids: [] }), 200).body.tenant_ids).to.deep.equal([]);
    const plain = await createEndpoint(owner.as);
    expect(expectStatus(await owner.as.patch(`${PATH}/${plain.id}`, { tenant_events: 'all' }), 200).body).to.deep.include({
      tenant_events: 'all',
      tenant_ids: [],
    });
  });

  it('tenant_ids selects tenants only for "all": given with "none" is 400; setting "none" empties it', async () => {
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_ids: [tenantIds[0]] })), 'tenant_ids');
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'none', tenant_ids: [tenantIds[0]] })), 'tenant_ids');
    const endpoint = await createEndpoint(owner.as, { tenant_events: 'all', tenant_ids: [tenantIds[0]] });
    const one = `${PATH}/${endpoint.id}`;
    expectInvalid(await owner.as.patch(one, { tenant_events: 'none', tenant_ids: [tenantIds[0]] }), 'tenant_ids');
    expect(expectStatus(await owner.as.patch(one, { tenant_events: 'none' }), 200).body).to.deep.include({ tenant_events: 'none', tenant_ids: [] });
    expectInvalid(await owner.as.patch(one, { tenant_ids: [tenantIds[1]] }), 'tenant_ids');
    expect(expectStatus(await owner.as.get(one), 200).body).to.deep.include({ tenant_events: 'none', tenant_ids: [] });
  });

  it('an id that is not one of the reseller’s tenants is 400 naming it, another reseller’s exactly as an unknown one; at most 100, no repeats', async () => {
    const other = await reseller();
    const foreign = (await createTenant(other)).id;
    const before = (await walkList(owner.as, PATH, 100)).items.length;
    const error = expectInvalid(
      await owner.as.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: [tenantIds[0], foreign, UNKNOWN_TENANT] })),
      'tenant_ids.1',
    );
    expect(error.details).to.deep.equal([
      { path: 'tenant_ids.1', message: `${JSON.stringify(foreign)} is not one of your tenants.` },
      { path: 'tenant_ids.2', message: `${JSON.stringify(UNKNOWN_TENANT)} is not one of your tenants.` },
    ]);
    // The other reseller itself, and the reseller itself, are no tenants of it either.
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: [other.id] })), 'tenant_ids.0');
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: [owner.id] })), 'tenant_ids.0');
    const tooMany = Array.from({ length: 101 }, (_, i) => `org_${i}`);
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: tooMany })), 'tenant_ids');
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: [tenantIds[0], tenantIds[0]] })), 'tenant_ids.1');
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'some' })), 'tenant_events');
    expectInvalid(await owner.as.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: 'every' })), 'tenant_ids');
    const endpoint = await createEndpoint(owner.as, { tenant_events: 'all' });
    expectInvalid(await owner.as.patch(`${PATH}/${endpoint.id}`, { tenant_ids: [foreign] }), 'tenant_ids.0');
    expect((await walkList(owner.as, PATH, 100)).items.length).to.equal(before + 1);
    expect(expectStatus(await owner.as.get(`${PATH}/${endpoint.id}`), 200).body.tenant_ids).to.deep.equal([]);
    // 100 is allowed: named once each, all the reseller's.
    const many = await reseller({ tenant_limit: 100 });
    const hundred: string[] = [];
    for (let i = 0; i < 100; i++) hundred.push((await createTenant(many, { name: `Tenant ${i}` })).id);
    expect((await createEndpoint(many.as, { tenant_events: 'all', tenant_ids: hundred })).tenant_ids).to.deep.equal(hundred);
  });

  it('"all" on an organization that is not a reseller is 403 not_a_reseller, on create and PATCH; "none" and [] are accepted', async () => {
    const org = await createOrg();
    const caller = asCaller(org.key);
    expectError(await caller.post(PATH, endpointBody({ tenant_events: 'all' })), 403, 'not_a_reseller');
    expect((await walkList(caller, PATH, 100)).items).to.deep.equal([]);
    const endpoint = await createEndpoint(caller, { tenant_events: 'none', tenant_ids: [] });
    expectError(await caller.patch(`${PATH}/${endpoint.id}`, { tenant_events: 'all' }), 403, 'not_a_reseller');
    expectError(await caller.patch(`${PATH}/${endpoint.id}`, { tenant_events: 'all', tenant_ids: [] }), 403, 'not_a_reseller');
    expect(expectStatus(await caller.get(`${PATH}/${endpoint.id}`), 200).body.tenant_events).to.equal('none');
  });

  it('once the operator removes reseller access, "all" is 403 not_a_reseller; the endpoint can still be set back to "none"', async () => {
    const former = await reseller();
    const endpoint = await createEndpoint(former.as, { tenant_events: 'all' });
    const one = `${PATH}/${endpoint.id}`;
    await operatorPatchOrg(former.id, { reseller: false });
    expect(expectStatus(await former.as.get(one), 200).body.tenant_events).to.equal('all');
    expectError(await former.as.patch(one, { tenant_ids: [] }), 403, 'not_a_reseller');
    expectError(await former.as.post(PATH, endpointBody({ tenant_events: 'all' })), 403, 'not_a_reseller');
    expect(expectStatus(await former.as.patch(one, { name: 'Kept' }), 200).body).to.deep.include({ name: 'Kept', tenant_events: 'all' });
    expect(expectStatus(await former.as.patch(one, { tenant_events: 'none' }), 200).body.tenant_events).to.equal('none');
  });

  it('either field inside a tenant is 400 invalid_request naming it, even at its default', async () => {
    const inside = owner.inside(tenantIds[0]);
    expectInvalid(await inside.post(PATH, endpointBody({ tenant_events: 'none' })), 'tenant_events');
    expectInvalid(await inside.post(PATH, endpointBody({ tenant_ids: [] })), 'tenant_ids');
    expectInvalid(await inside.post(PATH, endpointBody({ tenant_events: 'all', tenant_ids: [tenantIds[0]] })), 'tenant_ids');
    expect((await walkList(inside, PATH, 100)).items).to.deep.equal([]);
    const endpoint = await createEndpoint(inside);
    expect(endpoint).to.deep.include({ tenant_events: 'none', tenant_ids: [] });
    expectInvalid(await inside.patch(`${PATH}/${endpoint.id}`, { tenant_events: 'all' }), 'tenant_events');
    expectInvalid(await inside.patch(`${PATH}/${endpoint.id}`, { tenant_ids: [] }), 'tenant_ids');
  });

  it('GET /v1/webhook-deliveries?tenant_id: one of the caller’s tenants, else 400 naming tenant_id; inside a tenant 400', async () => {
    expect(expectStatus(await owner.as.get(`/v1/webhook-deliveries?tenant_id=${tenantIds[0]}`), 200).body).to.deep.equal({ data: [], next_cursor: null });
    const foreign = (await createTenant(await reseller())).id;
    for (const id of [foreign, UNKNOWN_TENANT, owner.id]) {
      const error = expectInvalid(await owner.as.get(`/v1/webhook-deliveries?tenant_id=${id}`), 'tenant_id');
      expect(error.details).to.deep.equal([{ path: 'tenant_id', message: `${JSON.stringify(id)} is not one of your tenants.` }]);
    }
    expectInvalid(await asCaller((await createOrg()).key).get(`/v1/webhook-deliveries?tenant_id=${tenantIds[0]}`), 'tenant_id');
    expectInvalid(await owner.inside(tenantIds[0]).get(`/v1/webhook-deliveries?tenant_id=${tenantIds[0]}`), 'tenant_id');
  });
});

describe('reseller-wide webhook endpoints: what they receive (real calls, relay, webhooks worker, receivers)', function () {
  this.timeout(90_000);
  const processes: ChildProcess[] = [];
  before(async function () {
    this.timeout(60_000);
    const settings = { WEBHOOK_BACKOFF_BASE_MS: '50' };
    const started = await Promise.all([startService('relay', settings), startService('webhooks', settings), startService('tenants')]);
    processes.push(await startCallsWorker(), ...started.map((s) => s.child));
  });
  after(async () => {
    await Promise.all(processes.map((p) => stopProcess(p)));
  });
  const receiver = receiversOfBlock();

  it("gets every tenant's events, of tenants created later too, besides the reseller's own: signed with its secret, X-Ringlane-Tenant-Id naming the tenant, which custom_headers cannot set", async () => {
    const [wide, plain, tenantOwn] = [await receiver(), await receiver(), await receiver()];
    const owner = await reseller();
    const a = await createTenant(owner);
    const endpoint = await createEndpoint(owner.as, {
      url: wide.url,
      tenant_events: 'all',
      custom_headers: { 'X-Ringlane-Tenant-Id': 'org_forged', 'X-Team': 'blue' },
    });
    const ordinary = await createEndpoint(owner.as, { url: plain.url });
    const ofA = await createEndpoint(owner.inside(a.id), { url: tenantOwn.url, secret: TENANT_SECRET });
    const b = await createTenant(owner); // after the endpoint: "every tenant" includes it
    const calls = {
      a: await (await dialer(owner.inside(a.id)))(),
      b: await (await dialer(owner.inside(b.id)))(),
      own: await (await dialer(owner.as))(),
    };

    await wide.until((all) => all.length >= 6);
    await tenantOwn.until((all) => all.length >= 2);
    await plain.until((all) => all.length >= 2);
    expect(arrivals(wide)).to.deep.equal(
      [...busyCall(calls.a.id, a.id, a.id), ...busyCall(calls.b.id, b.id, b.id), ...busyCall(calls.own.id, owner.id, null)].sort(),
    );
    expect(wide.received.every((r) => signedWith(r, SECRET) && r.headers['x-team'] === 'blue')).to.equal(true);
    // The tenant's own endpoint: its secret, and the header too.
    expect(arrivals(tenantOwn)).to.deep.equal(busyCall(calls.a.id, a.id, a.id).sort());
    expect(tenantOwn.received.every((r) => signedWith(r, TENANT_SECRET))).to.equal(true);
    // The reseller's endpoint without tenant events: its own events, no header.
    expect(arrivals(plain)).to.deep.equal(busyCall(calls.own.id, owner.id, null).sort());

    // The delivery log: the reseller's deliveries (of both its endpoints), each naming its tenant ...
    // (read once every attempt is recorded: the worker records a receiver's answers in batches, after them)
    await waitUntil(
      'the attempts recorded',
      async () => (await deliveries(owner.as)).every((d: any) => d.status === 'succeeded'),
      10_000,
      () => 'the reseller’s deliveries are not all succeeded',
    );
    const ownLog = await deliveries(owner.as);
    const twice = (line: string) => [line, line];
    expect(deliveryLines(ownLog)).to.deep.equal(
      [
        ...twice(`${endpoint.id} ${calls.a.id} ${a.id}`),
        ...twice(`${endpoint.id} ${calls.b.id} ${b.id}`),
        ...twice(`${endpoint.id} ${calls.own.id} null`),
        ...twice(`${ordinary.id} ${calls.own.id} null`),
      ].sort(),
    );
    const wideIds = ownLog.filter((d: any) => d.endpoint_id === endpoint.id).map((d: any) => d.id);
    expect(wideIds.sort()).to.deep.equal(wide.received.map((r) => r.headers['webhook-id']).sort());
    const ofTenantA = await deliveries(owner.as, `tenant_id=${a.id}`);
    expect(deliveryLines(ofTenantA)).to.deep.equal(twice(`${endpoint.id} ${calls.a.id} ${a.id}`));
    // ... and the tenant's: its own endpoint's, never the reseller's; a record reads the same to whoever may read it.
    const inA = owner.inside(a.id);
    const tenantLog = await deliveries(inA);
    expect(deliveryLines(tenantLog)).to.deep.equal(twice(`${ofA.id} ${calls.a.id} ${a.id}`));
    const [resellers] = ofTenantA;
    expect(expectStatus(await owner.as.get(`/v1/webhook-deliveries/${resellers.id}`), 200).body).to.deep.equal(resellers);
    expectError(await inA.get(`/v1/webhook-deliveries/${resellers.id}`), 404, 'webhook_delivery_not_found');
    expect(expectStatus(await inA.get(`/v1/webhook-deliveries/${tenantLog[0].id}`), 200).body.tenant_id).to.equal(a.id);
    expectError(await owner.as.get(`/v1/webhook-deliveries/${tenantLog[0].id}`), 404, 'webhook_delivery_not_found');
  });

  it('tenant_ids, event_types and outcomes all apply; another reseller’s tenants never reach it', async () => {
    const [everything, onlyA, onlyB, otherWide] = [await receiver(), await receiver(), await receiver(), await receiver()];
    const owner = await reseller();
    const [a, b] = [await createTenant(owner), await createTenant(owner)];
    const other = await reseller();
    const c = await createTenant(other);
    await createEndpoint(owner.as, { url: everything.url, tenant_events: 'all' });
    const firstA = await createEndpoint(owner.as, { url: onlyA.url, tenant_events: 'all', tenant_ids: [a.id], outcomes: ['positive'] });
    const queuedOfB = await createEndpoint(owner.as, { url: onlyB.url, tenant_events: 'all', tenant_ids: [b.id], event_types: ['call.queued'] });
    await createEndpoint(other.as, { url: otherWide.url, tenant_events: 'all' });
    const [inA, inB, inC] = [await dialer(owner.inside(a.id)), await dialer(owner.inside(b.id)), await dialer(other.inside(c.id))];
    const talk = (outcome: string) => ({ duration_seconds: 1, outcome });
    const calls = { aPositive: await inA(talk('positive')), aNegative: await inA(talk('negative')), bPositive: await inB(talk('positive')), c: await inC() };

    // Every event of the three calls of the reseller's tenants reached the endpoint without filters,
    // and the other reseller's tenant's call its own: every one of them is relayed.
    await everything.until((all) => all.length >= 12);
    await otherWide.until((all) => all.length >= 2);
    expect(arrivals(otherWide)).to.deep.equal(busyCall(calls.c.id, c.id, c.id).sort());
    const log = await deliveries(owner.as);
    expect(log.map((d: any) => d.call_id)).to.not.include(calls.c.id);
    expect(await deliveries(owner.as, `call_id=${calls.c.id}`)).to.deep.equal([]);
    const of = (endpointId: string) => log.filter((d: any) => d.endpoint_id === endpointId).map((d: any) => `${d.call_id} ${d.event} ${d.tenant_id}`);
    expect(of(firstA.id)).to.deep.equal([`${calls.aPositive.id} call.completed ${a.id}`]);
    expect(of(queuedOfB.id)).to.deep.equal([`${calls.bPositive.id} call.queued ${b.id}`]);
    await onlyA.until((all) => all.length >= 1);
    await onlyB.until((all) => all.length >= 1);
    expect(arrivals(onlyA)).to.deep.equal([`${calls.aPositive.id} call.completed ${a.id} ${a.id}`]);
    expect(arrivals(onlyB)).to.deep.equal([`${calls.bPositive.id} call.queued ${b.id} ${b.id}`]);
    expect([...everything.received, ...onlyA.received, ...onlyB.received].every((r) => signedWith(r, SECRET))).to.equal(true);
    expect(everything.received.map((r) => r.body.call_id)).to.not.include(calls.c.id);
  });

  it("gets a tenant's webhook_endpoint.disabled when it lists it, and a disabled tenant's events still arrive", async () => {
    const [listing, callsOnly, gone] = [await receiver(), await receiver(), await receiver(() => ({ status: 410 }))];
    const owner = await reseller();
    const a = await createTenant(owner);
    const inA = owner.inside(a.id);
    const operational = await createEndpoint(owner.as, {
      url: listing.url,
      tenant_events: 'all',
      event_types: ['webhook_endpoint.disabled', 'call.completed'],
    });
    const calling = await createEndpoint(owner.as, { url: callsOnly.url, tenant_events: 'all' });
    const ofA = await createEndpoint(inA, { url: gone.url, secret: TENANT_SECRET, event_types: ['call.queued'] });

    // The tenant's endpoint answers 410 to its first delivery: disabled, and that event is the tenant's.
    const talking = await (await dialer(inA))({ duration_seconds: 14_400 });
    await listing.until((all) => all.some((r) => r.body.event === 'webhook_endpoint.disabled'));
    const disabled = listing.received.find((r) => r.body.event === 'webhook_endpoint.disabled')!;
    expect(disabled.body).to.deep.include({ org_id: a.id, endpoint_id: ofA.id, reason: 'gone' });
    expect(disabled.headers['x-ringlane-tenant-id']).to.equal(a.id);
    expect(signedWith(disabled, SECRET)).to.equal(true);

    // The tenant is disabled while its call talks: the call is hung up, and its end still arrives.
    const status = async () => expectStatus(await inA.get(`/v1/calls/${talking.id}`), 200).body.status;
    await waitUntil('the call in progress', async () => (await status()) === 'in_progress', 20_000, status);
    expectStatus(await owner.as.patch(`/v1/tenants/${a.id}`, { disabled: true }), 200);
    await ended(listing, talking.id);
    const completed = listing.received.find((r) => r.body.event === 'call.completed')!;
    expect(completed.body).to.deep.include({ call_id: talking.id, org_id: a.id, end_reason: 'tenant_disabled' });
    expect(completed.headers['x-ringlane-tenant-id']).to.equal(a.id);
    await ended(callsOnly, talking.id);
    expect(arrivals(callsOnly)).to.deep.equal(
      ['call.completed', 'call.in_progress', 'call.queued', 'call.ringing'].map((event) => `${talking.id} ${event} ${a.id} ${a.id}`),
    );
    // An operational event goes only to the endpoints listing it.
    const log = await deliveries(owner.as, 'event=webhook_endpoint.disabled');
    expect(log.map((d: any) => `${d.endpoint_id} ${d.tenant_id}`)).to.deep.equal([`${operational.id} ${a.id}`]);
    expect(log.map((d: any) => d.endpoint_id)).to.not.include(calling.id);
  });

  it('once the operator removes reseller access the endpoint gets only the reseller’s own events, and its tenants’ again when access is back', async () => {
    const [wide, tenantOwn] = [await receiver(), await receiver()];
    const owner = await reseller();
    const a = await createTenant(owner);
    const inA = owner.inside(a.id);
    const [agent] = expectStatus(await inA.get('/v1/agents'), 200).body.data;
    const number = expectStatus(await inA.post('/v1/phone-numbers', { agent_id: agent.id }), 201).body.phone_number;
    await createEndpoint(owner.as, { url: wide.url, tenant_events: 'all' });
    await createEndpoint(inA, { url: tenantOwn.url, secret: TENANT_SECRET });
    const dialOwn = await dialer(owner.as);
    const setReseller = (on: boolean) => operatorPatchOrg(owner.id, { reseller: on });
    /** An inbound call to the tenant's number (the operator's simulator: it needs no reseller access). */
    const ringTenant = async () => {
      const res = await request(await app())
        .post('/admin/v1/simulator/inbound-calls')
        .set('Authorization', operator())
        .send({ to: number, from: uniquePhone(), simulate: { answer: 'busy' } });
      return expectStatus(res, 201).body.call.id as string;
    };

    await setReseller(false);
    const unheard = await ringTenant();
    const own = await dialOwn();
    await ended(tenantOwn, unheard);
    await ended(wide, own.id);
    expect(tenantOwn.received.every((r) => r.headers['x-ringlane-tenant-id'] === a.id && signedWith(r, TENANT_SECRET))).to.equal(true);
    expect(await deliveries(owner.as, `call_id=${unheard}`)).to.deep.equal([]);

    await setReseller(true);
    const heard = await ringTenant();
    await ended(wide, heard);
    const seen = new Set(wide.received.map((r) => `${r.body.call_id} ${r.body.org_id} ${tenantHeader(r)}`));
    expect([...seen].sort()).to.deep.equal([`${own.id} ${owner.id} no-header`, `${heard} ${a.id} ${a.id}`].sort());
  });
});
