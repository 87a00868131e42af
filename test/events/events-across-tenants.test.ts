// CONTRACT.md §5 "Events feed across tenants": GET /v1/events?include_tenants=true and tenant_id,
// and `tenant_id` on every event, through the HTTP API. No worker runs here: each call stays
// queued, which is one `call.queued` event; disabling a tenant is the reseller's own event.
import { expect } from 'chai';
import type { DataSource } from 'typeorm';
import type { Actor } from '../../src/auth/actor.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { asCaller, createOrg, expectError, expectStatus, keyWith, operatorPatchOrg, walkList, type Caller } from '../helpers/api.js';
import { expectInvalid, newestFirst } from '../helpers/org-resource.js';
import { QueryPlans, type PlanNode } from '../helpers/query-plans.js';
import { redisForTests } from '../helpers/redis.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { placeCall, uniquePhone, voiceOrg } from '../helpers/voice.js';

const FIELDS = ['id', 'type', 'created_at', 'tenant_id', 'data'];

/** Every event of the caller's feed (`query` filters), walking its pages. */
const feed = async (caller: Caller, query = '', limit = 100) => (await walkList(caller, `/v1/events${query ? `?${query}` : ''}`, limit)).items;
const ids = (events: any[]) => events.map((e) => e.id);

/** A call placed inside the tenant (it stays queued: one `call.queued` event). */
async function placeInside(owner: Reseller, tenantId: string) {
  const inside = owner.inside(tenantId);
  const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
  const contact = expectStatus(await inside.post('/v1/contacts', { name: 'X', phone_number: uniquePhone() }), 201).body;
  return expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id }), 201).body;
}

/** A reseller with tenants A and B, a call in each (B's twice) and one of its own, and B disabled and enabled again. */
async function resellerWithEvents() {
  const owner = await reseller();
  const [a, b] = [await createTenant(owner, { name: 'A' }), await createTenant(owner, { name: 'B' })];
  const calls = { a: await placeInside(owner, a.id), b: [await placeInside(owner, b.id), await placeInside(owner, b.id)] };
  const agent = expectStatus(await owner.as.post('/v1/agents', { name: 'Own' }), 201).body;
  const contact = expectStatus(await owner.as.post('/v1/contacts', { name: 'Own', phone_number: uniquePhone() }), 201).body;
  const own = expectStatus(await owner.as.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id }), 201).body;
  expectStatus(await owner.as.patch(`/v1/tenants/${b.id}`, { disabled: true }), 200);
  expectStatus(await owner.as.patch(`/v1/tenants/${b.id}`, { disabled: false }), 200);
  return { owner, a, b, calls, own };
}

describe('events feed across tenants (CONTRACT.md §5)', () => {
  let world: Awaited<ReturnType<typeof resellerWithEvents>>;
  let other: Awaited<ReturnType<typeof resellerWithEvents>>;

  before(async function () {
    this.timeout(60_000);
    world = await resellerWithEvents();
    other = await resellerWithEvents();
  });

  it('every event has tenant_id: the tenant whose event it is, null for a non-tenant organization’s; the same inside the tenant and in the reseller’s feed', async () => {
    const { owner, a, b } = world;
    const insideA = await feed(owner.inside(a.id));
    const insideB = await feed(owner.inside(b.id));
    const own = await feed(owner.as);
    expect(insideA).to.have.lengthOf(1);
    expect(insideB).to.have.lengthOf(2);
    for (const event of [...insideA, ...insideB, ...own]) expect(event).to.have.all.keys(...FIELDS);
    expect(insideA.map((e: any) => e.tenant_id)).to.deep.equal([a.id]);
    expect(insideB.map((e: any) => e.tenant_id)).to.deep.equal([b.id, b.id]);
    // The reseller's own: its call and tenant.disabled/enabled, which name the tenant in their data but are not the tenant's.
    expect(own.map((e: any) => [e.type, e.tenant_id])).to.deep.equal([
      ['tenant.enabled', null],
      ['tenant.disabled', null],
      ['call.queued', null],
    ]);
    expect(own[0].data.tenant_id).to.equal(b.id);

    const all = await feed(owner.as, 'include_tenants=true');
    expect(all).to.deep.equal(newestFirst([...own, ...insideA, ...insideB]));
    expect(expectStatus(await owner.inside(a.id).get(`/v1/events/${insideA[0].id}`), 200).body).to.deep.equal(insideA[0]);

    const ordinary = await voiceOrg();
    await placeCall(ordinary);
    const [theirs] = await feed(asCaller(ordinary.key));
    expect(theirs.tenant_id).to.equal(null);
  });

  it('include_tenants=true: the reseller’s own events and all its tenants’, newest first, paged, filtered as usual; never another reseller’s', async () => {
    const { owner, a, b, calls } = world;
    const all = await feed(owner.as, 'include_tenants=true');
    expect(all).to.have.lengthOf(6);
    const { pages, items } = await walkList(owner.as, '/v1/events?include_tenants=true', 4);
    expect(pages.map((p) => p.data.length)).to.deep.equal([4, 2]);
    expect(items).to.deep.equal(all);
    const strangers = new Set(ids(await feed(other.owner.as, 'include_tenants=true')));
    expect(ids(all).filter((id) => strangers.has(id))).to.deep.equal([]);

    expect(ids(await feed(owner.as, 'include_tenants=true&type=call.queued'))).to.deep.equal(ids(all.filter((e: any) => e.type === 'call.queued')));
    expect(await feed(owner.as, `include_tenants=true&call_id=${calls.a.id}`)).to.deep.equal(all.filter((e: any) => e.data.call_id === calls.a.id));
    const [newest] = all;
    expect(await feed(owner.as, `include_tenants=true&created_before=${newest.created_at}`)).to.deep.equal(
      all.filter((e: any) => e.created_at < newest.created_at),
    );
    expect(await feed(owner.as, 'include_tenants=false')).to.deep.equal(await feed(owner.as));
    expect(new Set(all.map((e: any) => e.tenant_id))).to.deep.equal(new Set([null, a.id, b.id]));
  });

  it('tenant_id lists only that tenant’s events, with or without include_tenants, with the other filters', async () => {
    const { owner, a, b, calls } = world;
    const insideB = await feed(owner.inside(b.id));
    expect(await feed(owner.as, `tenant_id=${b.id}`)).to.deep.equal(insideB);
    expect(await feed(owner.as, `tenant_id=${b.id}&include_tenants=true`)).to.deep.equal(insideB);
    expect(await feed(owner.as, `tenant_id=${a.id}&include_tenants=false`)).to.deep.equal(await feed(owner.inside(a.id)));
    expect(await feed(owner.as, `tenant_id=${b.id}&call_id=${calls.b[0].id}`)).to.deep.equal(insideB.filter((e: any) => e.data.call_id === calls.b[0].id));
    expect(await feed(owner.as, `tenant_id=${b.id}&call_id=${calls.a.id}`)).to.deep.equal([]);
    expect(await feed(owner.as, `tenant_id=${b.id}&type=tenant.disabled`)).to.deep.equal([]);
  });

  it('tenant_id that is not one of the reseller’s tenants is 400 invalid_request naming it, the same for another reseller’s tenant, an unknown id and an organization', async () => {
    const { owner } = world;
    const answer = async (id: string) => {
      const error = expectInvalid(await owner.as.get(`/v1/events?tenant_id=${id}`), 'tenant_id');
      return JSON.stringify(error).split(id).join('<id>');
    };
    const unknown = await answer(`ten_${'0'.repeat(22)}`);
    expect(unknown).to.contain('<id>');
    for (const id of [other.a.id, other.owner.id, owner.id, 'ten_nope']) expect(await answer(id)).to.equal(unknown);
    expect(await answer(other.a.id)).to.equal(await answer(other.b.id));
  });

  it('for an organization that is not a reseller: include_tenants=true and tenant_id are 403 not_a_reseller; include_tenants=false is the usual feed', async () => {
    const ordinary = asCaller((await createOrg()).key);
    expectError(await ordinary.get('/v1/events?include_tenants=true'), 403, 'not_a_reseller');
    expectError(await ordinary.get(`/v1/events?tenant_id=${world.a.id}`), 403, 'not_a_reseller');
    expect(expectStatus(await ordinary.get('/v1/events?include_tenants=false'), 200).body).to.deep.equal({ data: [], next_cursor: null });
  });

  it('inside a tenant: include_tenants=true and tenant_id (even its own id) are 400 invalid_request naming each; include_tenants=false is its feed', async () => {
    const { owner, a } = world;
    const inside = owner.inside(a.id);
    expectInvalid(await inside.get('/v1/events?include_tenants=true'), 'include_tenants');
    expectInvalid(await inside.get(`/v1/events?tenant_id=${a.id}`), 'tenant_id');
    const both = expectInvalid(await inside.get(`/v1/events?include_tenants=true&tenant_id=${a.id}`), 'include_tenants');
    expect(both.details.map((d: any) => d.path)).to.deep.equal(['include_tenants', 'tenant_id']);
    expect(await feed(inside, 'include_tenants=false')).to.deep.equal(await feed(inside));
  });

  it('include_tenants is only `true` or `false`; tenant_id a single id', async () => {
    const { owner, a } = world;
    for (const bad of ['TRUE', 'True', '1', 'yes', 'on', '', 'null', 'true,false']) {
      expectInvalid(await owner.as.get(`/v1/events?include_tenants=${encodeURIComponent(bad)}`), 'include_tenants');
    }
    expectInvalid(await owner.as.get('/v1/events?include_tenants=true&include_tenants=false'), 'include_tenants');
    expectInvalid(await owner.as.get(`/v1/events?tenant_id=${a.id}&tenant_id=${a.id}`), 'tenant_id');
    expectInvalid(await owner.as.get(`/v1/events?tenant_id=${'t'.repeat(41)}`), 'tenant_id');
    expectInvalid(await owner.as.get('/v1/events?tenant_id=a%00b'), 'tenant_id');
  });

  it('GET /v1/events/{id}: the reseller acting as itself reads its tenants’ events (as its feed lists them); nobody else does', async () => {
    const { owner, a, b } = world;
    const [ofA] = await feed(owner.inside(a.id));
    expect(expectStatus(await owner.as.get(`/v1/events/${ofA.id}`), 200).body).to.deep.equal(ofA);
    expect(expectStatus(await asCaller(await keyWith(owner, [])).get(`/v1/events/${ofA.id}`), 200).body).to.deep.equal(ofA);
    expectError(await owner.inside(b.id).get(`/v1/events/${ofA.id}`), 404, 'event_not_found');
    expectError(await other.owner.as.get(`/v1/events/${ofA.id}`), 404, 'event_not_found');
    // The reseller's own event is not the tenant's.
    const [ownEvent] = await feed(owner.as);
    expectError(await owner.inside(a.id).get(`/v1/events/${ownEvent.id}`), 404, 'event_not_found');
  });

  it('once the operator takes reseller access away: only the organization’s own events, include_tenants is 403', async () => {
    const former = await resellerWithEvents();
    const [ofA] = await feed(former.owner.inside(former.a.id));
    const own = await feed(former.owner.as);
    await operatorPatchOrg(former.owner.id, { reseller: false });
    expectError(await former.owner.as.get('/v1/events?include_tenants=true'), 403, 'not_a_reseller');
    expectError(await former.owner.as.get(`/v1/events?tenant_id=${former.a.id}`), 403, 'not_a_reseller');
    expectError(await former.owner.as.get(`/v1/events/${ofA.id}`), 404, 'event_not_found');
    expect(await feed(former.owner.as)).to.deep.equal(own);
  });

  describe('the plan: one index range of the account, newest first', () => {
    const plans = new QueryPlans();
    let dataSource: DataSource;
    let runtime: Runtime;

    before(async () => {
      dataSource = await plans.dataSource();
      runtime = createRuntime({ db: dataSource, redis: redisForTests() });
    });
    after(async () => {
      await runtime.close();
      await dataSource.destroy();
    });

    /** Every node of a plan. */
    const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

    it('include_tenants reads (account_id, created_at, id) backwards, no sort, however many tenants: a page stops once full', async () => {
      const { owner } = world;
      const org = { id: owner.id, parentId: null, isReseller: true, disabled: false };
      const actor: Actor = { via: 'api_key', keyId: owner.keyId, credentialId: owner.keyId, memberId: owner.memberId, capabilities: [], ownerOrg: org, org };
      const page = await runtime.services.events.list(actor, { limit: 2, include_tenants: true });
      expect(ids(page.data)).to.deep.equal(ids((await feed(owner.as, 'include_tenants=true')).slice(0, 2)));
      const plan = plans.last('ev.account_id = $1');
      const all = nodes(plan);
      expect(all.map((n) => n['Node Type'])).to.not.include('Sort');
      const scans = all.filter((n) => n['Relation Name']?.startsWith('call_events'));
      expect(scans).to.not.be.empty;
      for (const scan of scans) {
        expect(scan['Node Type'], JSON.stringify(scan)).to.match(/^Index (Only )?Scan$/);
        expect(scan['Index Name']).to.match(/account/);
        expect(scan['Scan Direction']).to.equal('Backward');
      }
      // Every event here is from this run (today, or yesterday across midnight UTC): the older days are never started.
      expect(scans.filter((scan) => (scan['Actual Loops'] ?? 0) > 0).length).to.be.within(1, 2);
      expect(scans.length).to.be.above(2);
    });
  });
});
