import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { app, asCaller, createOrg, expectError, expectStatus, keyWith, operator, walkList, type Caller } from '../helpers/api.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { balanceOf, eventsOf, placeCall, uniquePhone, voiceOrg, waitForCalls, withCallsWorker, type VoiceOrg } from '../helpers/voice.js';

// Do-not-call lists (CONTRACT.md §4): the list through /v1/do-not-call, and the engine never
// dialing a listed number.

const list = (caller: Caller, phoneNumber: string, reason?: string) =>
  caller.post('/v1/do-not-call', reason === undefined ? { phone_number: phoneNumber } : { phone_number: phoneNumber, reason });
const listed = async (caller: Caller, phoneNumber: string) => expectStatus(await list(caller, phoneNumber), 201).body;

/** The contact's phone number, read through the API. */
const numberOf = async (org: VoiceOrg, contactId: string) => expectStatus(await asCaller(org.key).get(`/v1/contacts/${contactId}`), 200).body.phone_number;

const ledgerLinesOf = async (callId: string) => (await db.query(`SELECT id FROM ledger_entries WHERE reference = $1`, [`call:${callId}`])).length;

describe('do-not-call lists', function () {
  this.timeout(60_000);

  describe('/v1/do-not-call', () => {
    it('adds a number (201 with its entry), lists it newest first, filters by number and pages', async () => {
      const org = asCaller((await createOrg()).key);
      const numbers = Array.from({ length: 5 }, () => uniquePhone());
      const entry = expectStatus(await list(org, numbers[0], 'Asked not to be called on 2026-11-02'), 201).body;
      expect(entry).to.have.all.keys('id', 'phone_number', 'reason', 'created_at');
      expect(entry).to.include({ phone_number: numbers[0], reason: 'Asked not to be called on 2026-11-02' });
      expect(entry.id).to.match(/^dnc_/);
      expect(new Date(entry.created_at).toISOString()).to.equal(entry.created_at);
      const rest = [];
      for (const number of numbers.slice(1)) rest.push(await listed(org, number));
      expect(rest[0].reason).to.equal(null);

      const { items, pages } = await walkList(org, '/v1/do-not-call', 2);
      expect(pages).to.have.lengthOf(3);
      expect(items.map((e) => e.id)).to.deep.equal([entry, ...rest].map((e) => e.id).reverse());
      const one = expectStatus(await org.get(`/v1/do-not-call?phone_number=${encodeURIComponent(numbers[2])}`), 200).body;
      expect(one).to.deep.equal({ data: [rest[1]], next_cursor: null });
      expect(expectStatus(await org.get(`/v1/do-not-call?phone_number=${encodeURIComponent(uniquePhone())}`), 200).body.data).to.deep.equal([]);
    });

    it('reads the phone_number filter with an unencoded + (which a query string decodes as a space) as +', async () => {
      const org = asCaller((await createOrg()).key);
      const number = uniquePhone();
      const entry = await listed(org, number);
      for (const given of [number, `%2B${number.slice(1)}`, `%20${number.slice(1)}`]) {
        expect(expectStatus(await org.get(`/v1/do-not-call?phone_number=${given}`), 200).body, given).to.deep.equal({ data: [entry], next_cursor: null });
      }
      expectError(await org.get(`/v1/do-not-call?phone_number=%20%20${number.slice(1)}`), 400, 'invalid_request');
      expectError(await list(org, ` ${uniquePhone().slice(1)}`), 400, 'invalid_request');
    });

    it('a number already on the organization’s list is 409 already_listed; another organization may list it', async () => {
      const [mine, theirs] = [asCaller((await createOrg()).key), asCaller((await createOrg()).key)];
      const number = uniquePhone();
      await listed(mine, number);
      expectError(await list(mine, number, 'again'), 409, 'already_listed');
      await listed(theirs, number);
      expect(expectStatus(await mine.get('/v1/do-not-call'), 200).body.data).to.have.lengthOf(1);
    });

    it('answers 400 for a number that is not E.164 and for bad fields', async () => {
      const org = asCaller((await createOrg()).key);
      for (const [body, path] of [
        [{ phone_number: '4155550123' }, 'phone_number'],
        [{ phone_number: '+1 415 555 0123' }, 'phone_number'],
        [{ phone_number: '+0415550123' }, 'phone_number'],
        [{ phone_number: 14155550123 }, 'phone_number'],
        [{}, 'phone_number'],
        [{ phone_number: uniquePhone(), reason: 'x'.repeat(501) }, 'reason'],
        [{ phone_number: uniquePhone(), reason: '' }, 'reason'],
        [{ phone_number: uniquePhone(), until: '2027-01-01' }, 'until'],
      ] as const) {
        const error = expectError(await org.post('/v1/do-not-call', body), 400, 'invalid_request');
        expect(
          error.details.map((d: { path: string }) => d.path),
          JSON.stringify(body),
        ).to.include(path);
      }
      expectError(await org.get('/v1/do-not-call?phone_number=4155550123'), 400, 'invalid_request');
      expect(expectStatus(await org.get('/v1/do-not-call'), 200).body.data).to.deep.equal([]);
    });

    it('removes an entry (204); an unknown id, or another organization’s, is 404 do_not_call_entry_not_found', async () => {
      const [mine, theirs] = [asCaller((await createOrg()).key), asCaller((await createOrg()).key)];
      const entry = await listed(mine, uniquePhone());
      expectError(await theirs.delete(`/v1/do-not-call/${entry.id}`), 404, 'do_not_call_entry_not_found');
      expectStatus(await mine.delete(`/v1/do-not-call/${entry.id}`), 204);
      expect(expectStatus(await mine.get('/v1/do-not-call'), 200).body.data).to.deep.equal([]);
      expectError(await mine.delete(`/v1/do-not-call/${entry.id}`), 404, 'do_not_call_entry_not_found');
      expectError(await mine.delete('/v1/do-not-call/dnc_nope'), 404, 'do_not_call_entry_not_found');
      expectError(await mine.delete(`/v1/do-not-call/${'x'.repeat(41)}`), 404, 'do_not_call_entry_not_found');
      // Removed, the number may be listed again.
      await listed(mine, entry.phone_number);
    });

    it('writes need operate; reading does not', async () => {
      const org = await createOrg();
      const entry = await listed(asCaller(org.key), uniquePhone());
      const reader = asCaller(await keyWith(org, ['settings']));
      expect(expectError(await list(reader, uniquePhone()), 403, 'missing_capability').required).to.equal('operate');
      expect(expectError(await reader.delete(`/v1/do-not-call/${entry.id}`), 403, 'missing_capability').required).to.equal('operate');
      expect(expectStatus(await reader.get('/v1/do-not-call'), 200).body.data.map((e: { id: string }) => e.id)).to.deep.equal([entry.id]);
    });

    it('inside a tenant manages the tenant’s own list: the reseller’s is not shown there, nor the tenant’s to the reseller', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      const number = uniquePhone();
      const resellers = await listed(owner.as, number);
      // The same number may be on both lists: they are two organizations' lists.
      const tenants = await listed(inside, number);
      expect(expectStatus(await inside.get('/v1/do-not-call'), 200).body.data).to.deep.equal([tenants]);
      expect(expectStatus(await owner.as.get('/v1/do-not-call'), 200).body.data).to.deep.equal([resellers]);
      expectError(await inside.delete(`/v1/do-not-call/${resellers.id}`), 404, 'do_not_call_entry_not_found');
      expectStatus(await inside.delete(`/v1/do-not-call/${tenants.id}`), 204);
      expect(expectStatus(await owner.as.get('/v1/do-not-call'), 200).body.data).to.deep.equal([resellers]);
    });
  });

  describe('calls to a listed number', () => {
    withCallsWorker();

    it('is created (201) and never dialed: it ends canceled / do_not_call, uncharged, with its call.completed; an unlisted number’s call completes', async () => {
      const org = await voiceOrg({ contacts: 2 });
      const caller = asCaller(org.key);
      await listed(caller, await numberOf(org, org.contactIds[0]));
      const before = await balanceOf(org);

      const placed = await placeCall(org, { duration_seconds: 30 }, org.contactIds[0]);
      expect(placed).to.include({ status: 'queued', end_reason: null });
      const [barred] = await waitForCalls(org, [placed.id]);
      expect(barred).to.include({ status: 'canceled', end_reason: 'do_not_call', outcome: null, duration_seconds: 0, charge: '0.000000', started_at: null });
      expect(await balanceOf(org)).to.equal(before);
      expect(await ledgerLinesOf(placed.id)).to.equal(0);
      const events = await eventsOf(placed.id);
      expect(events.map((e) => `${e.sequence}:${e.event}`)).to.deep.equal(['1:call.queued', '2:call.completed']);
      expect(events[1].payload).to.include({ event: 'call.completed', call_id: placed.id, status: 'canceled', end_reason: 'do_not_call', sequence: 2 });
      const [listedCall] = expectStatus(await caller.get('/v1/calls?status=canceled'), 200).body.data;
      expect(listedCall).to.deep.equal(barred);

      const [other] = await waitForCalls(org, [(await placeCall(org, { duration_seconds: 30 }, org.contactIds[1])).id]);
      expect(other).to.include({ status: 'completed', end_reason: 'completed', charge: '0.060000' });
      expect(await balanceOf(org)).to.not.equal(before);
    });

    it('a number listed while its call waits for a slot is still never dialed', async () => {
      const org = await voiceOrg({ contacts: 2, fields: { ceiling: { max_concurrent_calls: 1, max_calls_per_hour: 100 } } });
      // The first call holds the one slot for a moment (1,000 call-seconds at SIM_SECOND_MS).
      const first = await placeCall(org, { duration_seconds: 1000 }, org.contactIds[0]);
      const waiting = await placeCall(org, { duration_seconds: 5 }, org.contactIds[1]);
      await listed(asCaller(org.key), await numberOf(org, org.contactIds[1]));
      const [done, barred] = await waitForCalls(org, [first.id, waiting.id]);
      expect(done).to.include({ status: 'completed' });
      expect(barred).to.include({ status: 'canceled', end_reason: 'do_not_call', charge: '0.000000' });
      expect((await eventsOf(waiting.id)).map((e) => e.event)).to.deep.equal(['call.queued', 'call.completed']);
    });

    it('a listed number’s call takes no start of the hour: the next call is placed at once', async () => {
      const org = await voiceOrg({ contacts: 2, fields: { ceiling: { max_concurrent_calls: 1, max_calls_per_hour: 1 } } });
      await listed(asCaller(org.key), await numberOf(org, org.contactIds[0]));
      const [barred] = await waitForCalls(org, [(await placeCall(org, {}, org.contactIds[0])).id]);
      expect(barred).to.include({ end_reason: 'do_not_call' });
      const [next] = await waitForCalls(org, [(await placeCall(org, { duration_seconds: 1 }, org.contactIds[1])).id], 15_000);
      expect(next).to.include({ status: 'completed' });
    });

    it('a tenant’s call is barred by its reseller’s list, which the tenant does not see, and by its own', async () => {
      const owner: Reseller = await reseller({ balance: '10.000000' });
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
      const contacts = [];
      for (const name of ['Resellers', 'Tenants', 'Nobodys'])
        contacts.push(expectStatus(await inside.post('/v1/contacts', { name, phone_number: uniquePhone() }), 201).body);
      await listed(owner.as, contacts[0].phone_number);
      await listed(inside, contacts[1].phone_number);
      expect(expectStatus(await inside.get('/v1/do-not-call'), 200).body.data.map((e: { phone_number: string }) => e.phone_number)).to.deep.equal([
        contacts[1].phone_number,
      ]);

      const before = expectStatus(await owner.as.get('/v1/balance'), 200).body.balance;
      const ids = [];
      for (const contact of contacts)
        ids.push(expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate: { duration_seconds: 0 } }), 201).body.id);
      const calls = await waitForCalls(owner, ids, 20_000, { 'X-Tenant-Id': tenant.id });
      expect(calls.map((c) => [c.status, c.end_reason])).to.deep.equal([
        ['canceled', 'do_not_call'],
        ['canceled', 'do_not_call'],
        ['completed', 'completed'],
      ]);
      expect(expectStatus(await owner.as.get('/v1/balance'), 200).body.balance).to.equal(before);
      // A reseller's list bars its tenants' calls, never another reseller's tenants'.
      const stranger = await reseller();
      const strangersTenant = await createTenant(stranger);
      const theirs = stranger.inside(strangersTenant.id);
      const [theirAgent] = expectStatus(await theirs.get('/v1/agents'), 200).body.data;
      const theirContact = expectStatus(await theirs.post('/v1/contacts', { name: 'Same number', phone_number: contacts[0].phone_number }), 201).body;
      const theirCall = expectStatus(
        await theirs.post('/v1/calls', { agent_id: theirAgent.id, contact_id: theirContact.id, simulate: { duration_seconds: 0 } }),
        201,
      ).body;
      const [done] = await waitForCalls(stranger, [theirCall.id], 20_000, { 'X-Tenant-Id': strangersTenant.id });
      expect(done).to.include({ status: 'completed' });
    });

    it('bars only calls to the number: a call from a listed number is answered; a number taken off the list is called again', async () => {
      const org = await voiceOrg({ contacts: 1 });
      const caller = asCaller(org.key);
      const contactNumber = await numberOf(org, org.contactIds[0]);
      const entry = await listed(caller, contactNumber);
      const [barred] = await waitForCalls(org, [(await placeCall(org, { duration_seconds: 1 }, org.contactIds[0])).id]);
      expect(barred).to.include({ status: 'canceled', end_reason: 'do_not_call' });
      const number = expectStatus(await caller.post('/v1/phone-numbers', { agent_id: org.agentId }), 201).body.phone_number;
      const inbound = await request(await app())
        .post('/admin/v1/simulator/inbound-calls')
        .set('Authorization', operator())
        .send({ to: number, from: contactNumber, simulate: { duration_seconds: 1 } });
      const [answered] = await waitForCalls(org, [expectStatus(inbound, 201).body.call.id]);
      expect(answered).to.include({ direction: 'inbound', status: 'completed' });

      expectStatus(await caller.delete(`/v1/do-not-call/${entry.id}`), 204);
      const [called] = await waitForCalls(org, [(await placeCall(org, { duration_seconds: 1 }, org.contactIds[0])).id]);
      expect(called).to.include({ status: 'completed', end_reason: 'completed' });
    });
  });
});
