// The events feed (CONTRACT.md §4 "Events feed"): GET /v1/events and /v1/events/{id}, through
// the HTTP API, and the operational events made by the API itself (tenant.disabled/enabled,
// balance.low from the operator's adjustments and threshold). No worker runs here: a call stays
// queued, which is one `call.queued` event. Delivery of events is in operational-events.test.ts.
import { expect } from 'chai';
import request from 'supertest';
import { config } from '../../src/config.js';
import { db } from '../helpers/db.js';
import { app, asCaller, createOrg, expectError, expectStatus, keyWith, operator, walkList, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid, ISO_UTC, newestFirst } from '../helpers/org-resource.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { placeCall, uniquePhone, voiceOrg, type VoiceOrg } from '../helpers/voice.js';

const DAY = 86_400_000;
const FIELDS = ['id', 'type', 'created_at', 'tenant_id', 'data'];

/** Every event of the caller's feed (`query` filters), walking its pages. */
const feed = async (caller: Caller, query = '', limit = 100) => (await walkList(caller, `/v1/events${query ? `?${query}` : ''}`, limit)).items;

/** The stored outbox row of an event: what the relay delivers. */
const storedPayload = async (id: string) => (await db.query('SELECT payload FROM call_events WHERE id = $1', [id]))[0]?.payload;

const admin = async () => request(await app());
const patchOrg = async (id: string, body: Record<string, unknown>) => (await admin()).patch(`/admin/v1/orgs/${id}`).set('Authorization', operator()).send(body);
const adjust = async (id: string, amount: string) =>
  expectStatus(await (await admin()).post(`/admin/v1/orgs/${id}/balance`).set('Authorization', operator()).send({ amount }), 200).body;

/** An event row written straight to the outbox, `daysAgo` days back (as history would hold it). */
async function insertOldEvent(orgId: string, daysAgo: number): Promise<string> {
  const id = `evt_old${daysAgo}_${Math.random().toString(36).slice(2, 10)}`;
  const at = new Date(Date.now() - daysAgo * DAY);
  await db.query(
    `INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, created_at, relayed_at)
     VALUES ($1, 'call_old', $2, $2, 1, 'call.queued', jsonb_build_object('event', 'call.queued', 'call_id', 'call_old', 'org_id', $2::varchar), $3, $3, $3)`,
    [id, orgId, at],
  );
  return id;
}

describe('events feed (CONTRACT.md §4 "Events feed")', () => {
  describe('GET /v1/events and /v1/events/{id}', () => {
    let org: VoiceOrg;
    let caller: Caller;
    let calls: any[];

    before(async () => {
      org = await voiceOrg({ contacts: 3 });
      caller = asCaller(org.key);
      calls = [];
      for (const contactId of org.contactIds) calls.push(await placeCall(org, {}, contactId));
    });

    it('lists the organization’s events newest first, with the list envelope; each {id, type, created_at, data}, data the stored body', async () => {
      const page = expectStatus(await caller.get('/v1/events'), 200).body;
      expect(page).to.have.all.keys('data', 'next_cursor');
      expect(page.next_cursor).to.equal(null);
      const events = page.data;
      expect(events).to.have.lengthOf(3);
      expect(events).to.deep.equal(newestFirst(events));
      for (const event of events) {
        expect(event).to.have.all.keys(...FIELDS);
        expect(event.id).to.match(/^evt_[0-9A-Za-z]{22}$/);
        expect(event.type).to.equal('call.queued');
        expect(event.created_at).to.match(ISO_UTC);
        expect(event.data).to.deep.equal(await storedPayload(event.id));
        expect(event.data).to.include({ event: 'call.queued', org_id: org.id, sequence: 1, status: 'queued' });
        expect(event.tenant_id).to.equal(null);
      }
      expect(events.map((e: any) => e.data.call_id).sort()).to.deep.equal(calls.map((c) => c.id).sort());
    });

    it('reads one event by id, exactly as listed', async () => {
      const [listed] = expectStatus(await caller.get('/v1/events?limit=1'), 200).body.data;
      expect(expectStatus(await caller.get(`/v1/events/${listed.id}`), 200).body).to.deep.equal(listed);
    });

    it('pages with limit and cursor, each event once', async () => {
      const { pages, items } = await walkList(caller, '/v1/events', 2);
      expect(pages.map((p) => p.data.length)).to.deep.equal([2, 1]);
      expect(items).to.deep.equal(await feed(caller));
    });

    it('filters by type, call_id, created_after and created_before (each exclusive)', async () => {
      const all = await feed(caller);
      const [newest, middle, oldest] = all;
      expect(await feed(caller, `call_id=${middle.data.call_id}`)).to.deep.equal([middle]);
      expect(await feed(caller, 'type=call.queued')).to.deep.equal(all);
      expect(await feed(caller, 'type=call.completed')).to.deep.equal([]);
      expect(await feed(caller, `type=call.queued&call_id=${oldest.data.call_id}`)).to.deep.equal([oldest]);
      // Calls placed within one millisecond share a created_at: the expectations come from the times.
      const after = (t: string) => all.filter((e: any) => e.created_at > t);
      const before = (t: string) => all.filter((e: any) => e.created_at < t);
      expect(await feed(caller, `created_after=${oldest.created_at}`)).to.deep.equal(after(oldest.created_at));
      expect(await feed(caller, `created_before=${newest.created_at}`)).to.deep.equal(before(newest.created_at));
      expect(
        await feed(
          caller,
          `created_after=${encodeURIComponent(new Date(Date.parse(oldest.created_at) - 1).toISOString())}&created_before=${encodeURIComponent(new Date(Date.parse(newest.created_at) + 1).toISOString())}`,
        ),
      ).to.deep.equal(all);
      expect(await feed(caller, `created_after=${new Date(Date.now() + 2 * DAY).toISOString()}`)).to.deep.equal([]);
      expect(await feed(caller, 'created_before=2000-01-01T00:00:00Z')).to.deep.equal([]);
      expect(await feed(caller, `call_id=call_${'0'.repeat(22)}`)).to.deep.equal([]);
    });

    it('refuses bad filter values and unknown parameters with 400 naming them', async () => {
      expectInvalid(await caller.get('/v1/events?type=call.done'), 'type');
      expectInvalid(await caller.get('/v1/events?type=call.%25'), 'type');
      expectInvalid(await caller.get(`/v1/events?call_id=${'c'.repeat(41)}`), 'call_id');
      expectInvalid(await caller.get('/v1/events?created_after=yesterday'), 'created_after');
      expectInvalid(await caller.get('/v1/events?created_before=2026-13-40T00:00:00Z'), 'created_before');
      expectInvalid(await caller.get('/v1/events?limit=0'), 'limit');
      expectInvalid(await caller.get('/v1/events?limit=101'), 'limit');
      expectInvalid(await caller.get('/v1/events?cursor=nonsense'), 'cursor');
      expectInvalid(await caller.get('/v1/events?event=call.queued'), 'event');
    });

    it('takes created_after and created_before only as real ISO 8601 UTC times ending in Z (YYYY-MM-DDTHH:MM:SS(.fraction)Z, years 0001-9999)', async () => {
      const bad = [
        '2026-01-01',
        '2026-01-01T00:00:00+05:00',
        '2026-01-01T00:00:00+00:00',
        '2026-01-01T00:00Z',
        '2026-01-01T00:00:00',
        '2026-02-30T00:00:00Z',
        '2026-01-01T24:00:00Z',
        '2026-01-01t00:00:00z',
        '2026-01-01 00:00:00Z',
        '0000-01-01T00:00:00Z',
        '-004714-11-24T00:00:00Z',
        '+012026-01-01T00:00:00Z',
      ];
      for (const name of ['created_after', 'created_before']) {
        for (const time of bad) expectInvalid(await caller.get(`/v1/events?${name}=${encodeURIComponent(time)}`), name);
        for (const time of [
          '2026-01-01T00:00:00Z',
          '2026-01-01T00:00:00.5Z',
          '2026-01-01T00:00:00.123456789Z',
          '0001-01-01T00:00:00Z',
          '9999-12-31T23:59:59.999Z',
        ]) {
          expectStatus(await caller.get(`/v1/events?${name}=${encodeURIComponent(time)}`), 200);
        }
      }
    });

    it('answers 404 event_not_found for an unknown id, an id that cannot exist, and another organization’s event', async () => {
      const other = await voiceOrg();
      await placeCall(other);
      const [theirs] = await feed(asCaller(other.key));
      for (const id of [theirs.id, `evt_${'0'.repeat(22)}`, 'x'.repeat(41), 'a%00b']) expectError(await caller.get(`/v1/events/${id}`), 404, 'event_not_found');
      expect((await feed(caller)).map((e: any) => e.id)).to.not.include(theirs.id);
      expect(expectStatus(await asCaller(other.key).get(`/v1/events/${theirs.id}`), 200).body).to.deep.equal(theirs);
    });

    it('needs no capability to read', async () => {
      const reader = asCaller(await keyWith(org, []));
      expect(await feed(reader)).to.deep.equal(await feed(caller));
    });
  });

  it(`keeps EVENT_RETENTION_DAYS (${config.eventRetentionDays}): an older event is neither listed nor read, whatever the filters`, async () => {
    const org = await createOrg();
    const caller = asCaller(org.key);
    const kept = await insertOldEvent(org.id, config.eventRetentionDays - 1);
    const gone = await insertOldEvent(org.id, config.eventRetentionDays + 1);
    expect((await feed(caller)).map((e: any) => e.id)).to.deep.equal([kept]);
    expect((await feed(caller, 'created_after=2000-01-01T00:00:00Z')).map((e: any) => e.id)).to.deep.equal([kept]);
    expect((await feed(caller, 'call_id=call_old')).map((e: any) => e.id)).to.deep.equal([kept]);
    expectStatus(await caller.get(`/v1/events/${kept}`), 200);
    expectError(await caller.get(`/v1/events/${gone}`), 404, 'event_not_found');
  });

  describe('inside a tenant, and a reseller’s own feed', () => {
    it('a tenant’s feed holds its own events; its reseller’s holds the reseller’s own, not its tenants’ call events (unless it asks: events-across-tenants.test.ts)', async () => {
      const owner = await reseller();
      const [a, b] = [await createTenant(owner), await createTenant(owner)];
      const placeInside = async (tenantId: string) => {
        const inside = owner.inside(tenantId);
        const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
        const contact = expectStatus(await inside.post('/v1/contacts', { name: 'X', phone_number: uniquePhone() }), 201).body;
        return expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id }), 201).body;
      };
      const callA = await placeInside(a.id);
      const callB = await placeInside(b.id);
      const insideA = await feed(owner.inside(a.id));
      expect(insideA.map((e: any) => [e.type, e.data.call_id, e.data.org_id])).to.deep.equal([['call.queued', callA.id, a.id]]);
      expect((await feed(owner.inside(b.id))).map((e: any) => e.data.call_id)).to.deep.equal([callB.id]);
      expect(await feed(owner.as)).to.deep.equal([]);
      expectError(await owner.inside(b.id).get(`/v1/events/${insideA[0].id}`), 404, 'event_not_found');
      expect(expectStatus(await owner.inside(a.id).get(`/v1/events/${insideA[0].id}`), 200).body).to.deep.equal(insideA[0]);
    });

    it('tenant.disabled and tenant.enabled go to the reseller, once per actual change, in the transaction of the change', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const tenantPath = `/v1/tenants/${tenant.id}`;
      expectStatus(await owner.as.patch(tenantPath, { disabled: false }), 200);
      expectStatus(await owner.as.patch(tenantPath, { name: 'Renamed' }), 200);
      expect(await feed(owner.as)).to.deep.equal([]);

      expectStatus(await owner.as.patch(tenantPath, { disabled: true }), 200);
      expectStatus(await owner.as.patch(tenantPath, { disabled: true, name: 'Still off' }), 200);
      expectStatus(await owner.as.patch(tenantPath, { disabled: false }), 200);
      const events = await feed(owner.as);
      expect(events.map((e: any) => e.type)).to.deep.equal(['tenant.enabled', 'tenant.disabled']);
      for (const event of events) {
        expect(event.data).to.have.all.keys('event', 'org_id', 'occurred_at', 'tenant_id');
        expect(event.data).to.include({ event: event.type, org_id: owner.id, tenant_id: tenant.id });
        expect(event.data.occurred_at).to.match(ISO_UTC);
        expect(event.data).to.deep.equal(await storedPayload(event.id));
      }
      // The reseller's own event: not the tenant's.
      expect(await feed(owner.inside(tenant.id))).to.deep.equal([]);
      expect((await feed(owner.as, 'type=tenant.disabled')).map((e: any) => e.id)).to.deep.equal([events[1].id]);
      const [row] = await db.query('SELECT call_id, sequence FROM call_events WHERE id = $1', [events[0].id]);
      expect(row).to.deep.equal({ call_id: null, sequence: null });
    });
  });

  describe('balance.low (CONTRACT.md §4), from the ledger, with the operator’s low_balance_threshold', () => {
    const lowEvents = async (org: TestOrg) => feed(asCaller(org.key), 'type=balance.low');

    it('is sent once when the balance falls below the threshold, again only after it was at or above it since', async () => {
      const org = await createOrg({ balance: '100.00' });
      const set = expectStatus(await patchOrg(org.id, { low_balance_threshold: '50.00' }), 200).body;
      expect(set).to.include({ low_balance_threshold: '50.000000', balance: '100.000000' });
      expect(await lowEvents(org)).to.deep.equal([]);

      await adjust(org.id, '-50'); // 50.00: at the threshold is not below it
      expect(await lowEvents(org)).to.deep.equal([]);
      await adjust(org.id, '-0.000001');
      let events = await lowEvents(org);
      expect(events).to.have.lengthOf(1);
      expect(events[0].data).to.have.all.keys('event', 'org_id', 'occurred_at', 'balance', 'currency', 'threshold');
      expect(events[0].data).to.include({ event: 'balance.low', org_id: org.id, balance: '49.999999', currency: 'USD', threshold: '50.000000' });

      await adjust(org.id, '-10');
      await adjust(org.id, '5');
      expect(await lowEvents(org)).to.have.lengthOf(1);

      await adjust(org.id, '5.000001'); // back at 50.00
      expect(await lowEvents(org)).to.have.lengthOf(1);
      await adjust(org.id, '-20');
      events = await lowEvents(org);
      expect(events.map((e: any) => e.data.balance)).to.deep.equal(['30.000000', '49.999999']);
    });

    it('is sent at once when the operator sets a threshold above the balance; a lower one re-arms it; null unsets it', async () => {
      const org = await createOrg({ balance: '10.00' });
      expect(expectStatus(await (await admin()).get(`/admin/v1/orgs/${org.id}`).set('Authorization', operator()), 200).body.low_balance_threshold).to.equal(
        null,
      );
      expectStatus(await patchOrg(org.id, { low_balance_threshold: '20' }), 200);
      const [first] = await lowEvents(org);
      expect(first.data).to.include({ event: 'balance.low', org_id: org.id, balance: '10.000000', currency: 'USD', threshold: '20.000000' });
      // Still below the new threshold: no second event.
      expectStatus(await patchOrg(org.id, { low_balance_threshold: '30' }), 200);
      expect(await lowEvents(org)).to.have.lengthOf(1);
      // Now above it: a later fall below is a new one.
      expectStatus(await patchOrg(org.id, { low_balance_threshold: '5' }), 200);
      await adjust(org.id, '-6');
      expect((await lowEvents(org)).map((e: any) => [e.data.balance, e.data.threshold])).to.deep.equal([
        ['4.000000', '5.000000'],
        ['10.000000', '20.000000'],
      ]);
      expect(expectStatus(await patchOrg(org.id, { low_balance_threshold: null }), 200).body.low_balance_threshold).to.equal(null);
      await adjust(org.id, '10');
      await adjust(org.id, '-13');
      expect(await lowEvents(org)).to.have.lengthOf(2);
    });

    it('takes a threshold up to 10^12 inclusive, as documented, and refuses 10^12 plus a micro-unit', async () => {
      const org = await createOrg();
      for (const top of ['1000000000000', '1000000000000.000000']) {
        expect(expectStatus(await patchOrg(org.id, { low_balance_threshold: top }), 200).body.low_balance_threshold).to.equal('1000000000000.000000');
      }
      const error = expectInvalid(await patchOrg(org.id, { low_balance_threshold: '1000000000000.000001' }), 'low_balance_threshold');
      expect(error.message).to.include('1000000000000.000000');
      expectInvalid(await patchOrg(org.id, { low_balance_threshold: '10000000000000' }), 'low_balance_threshold');
    });

    it('refuses a threshold that is not a non-negative amount', async () => {
      const org = await createOrg();
      for (const bad of ['-1', 'ten', '1.0000001', 5, true]) {
        expectInvalid(await patchOrg(org.id, { low_balance_threshold: bad }), 'low_balance_threshold');
      }
      expect(await lowEvents(org)).to.deep.equal([]);
    });
  });
});
