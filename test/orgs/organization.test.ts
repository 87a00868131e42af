import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { asCaller, createOrg, expectError, expectStatus, insertTenant, keyWith, walkList, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid, ISO_UTC, newestFirst, uniqueNumber } from '../helpers/org-resource.js';

/** A key of `org` with every capability but `settings`. */
const withoutSettings = (org: TestOrg) => keyWith(org, ['operate', 'api_keys', 'webhooks']);

describe('organization settings (CONTRACT.md "Other areas")', () => {
  let org: TestOrg;
  let owner: Caller;
  beforeEach(async () => {
    org = await createOrg({ name: 'Smile Dental', timezone: 'Europe/Berlin' });
    owner = asCaller(org.key);
  });

  describe('/v1/organization', () => {
    it('GET answers the acting organization', async () => {
      const body = expectStatus(await owner.get('/v1/organization'), 200).body;
      expect(body).to.have.all.keys('id', 'name', 'timezone', 'created_at');
      expect(body).to.include({ id: org.id, name: 'Smile Dental', timezone: 'Europe/Berlin', created_at: org.body.org.created_at });
      expect(body.created_at).to.match(ISO_UTC);
    });

    it('PATCH renames it and moves it to another time zone', async () => {
      const renamed = expectStatus(await owner.patch('/v1/organization', { name: 'Smile Dental Care' }), 200).body;
      expect(renamed).to.include({ name: 'Smile Dental Care', timezone: 'Europe/Berlin' });
      const moved = expectStatus(await owner.patch('/v1/organization', { timezone: 'America/New_York' }), 200).body;
      expect(moved).to.include({ name: 'Smile Dental Care', timezone: 'America/New_York' });
      expect(expectStatus(await owner.get('/v1/organization'), 200).body).to.deep.equal(moved);
    });

    it('inside a tenant, is the tenant', async () => {
      const tenantId = await insertTenant(org, 'Tenant Clinic');
      const inside = asCaller(org.key, { 'X-Tenant-Id': tenantId });
      expect(expectStatus(await inside.get('/v1/organization'), 200).body).to.include({ id: tenantId, name: 'Tenant Clinic' });
      expectStatus(await inside.patch('/v1/organization', { name: 'Renamed Tenant' }), 200);
      expect(expectStatus(await owner.get('/v1/organization'), 200).body.name).to.equal('Smile Dental');
    });

    const bad: [string, Record<string, unknown>, string][] = [
      ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      ['an offset instead of a zone', { timezone: 'UTC+5' }, 'timezone'],
      ['a time zone that is not a string', { timezone: 1 }, 'timezone'],
      ['an empty name', { name: '' }, 'name'],
      ['a name that is not a string', { name: false }, 'name'],
      ['a field that is not settable', { currency: 'EUR' }, 'currency'],
    ];
    for (const [what, body, path] of bad) {
      it(`PATCH is 400 for ${what}`, async () => {
        expectInvalid(await owner.patch('/v1/organization', body), path);
      });
    }

    it('PATCH is 400 with nothing to change', async () => {
      expectError(await owner.patch('/v1/organization', {}), 400, 'invalid_request');
    });

    it('PATCH needs settings', async () => {
      const res = await asCaller(await withoutSettings(org)).patch('/v1/organization', { name: 'Nope' });
      expect(expectError(res, 403, 'missing_capability').required).to.equal('settings');
    });
  });

  describe('/v1/carrier', () => {
    it('is the simulator by default, and PUT keeps it so', async () => {
      expect(expectStatus(await owner.get('/v1/carrier'), 200).body).to.deep.equal({ provider: 'simulator' });
      expect(expectStatus(await owner.put('/v1/carrier', { provider: 'simulator' }), 200).body).to.deep.equal({ provider: 'simulator' });
    });

    it('PUT is 400 for any other provider, or none', async () => {
      const error = expectInvalid(await owner.put('/v1/carrier', { provider: 'twilio' }), 'provider');
      expect(error.message).to.include('simulator');
      expectInvalid(await owner.put('/v1/carrier', {}), 'provider');
      expectInvalid(await owner.put('/v1/carrier', { provider: 'simulator', sid: 'x' }), 'sid');
    });

    it('PUT needs settings', async () => {
      const res = await asCaller(await withoutSettings(org)).put('/v1/carrier', { provider: 'simulator' });
      expect(expectError(res, 403, 'missing_capability').required).to.equal('settings');
    });
  });

  describe('/v1/sms-sender (SPEC.md §4.2)', () => {
    it("is null until set; PUT sets one of the organization's numbers; null clears it", async () => {
      expect(expectStatus(await owner.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: null });
      const number = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      const set = expectStatus(await owner.put('/v1/sms-sender', { phone_number: number.phone_number }), 200).body;
      expect(set).to.deep.equal({ phone_number: number.phone_number });
      expect(expectStatus(await owner.get('/v1/sms-sender'), 200).body).to.deep.equal(set);
      expect(expectStatus(await owner.put('/v1/sms-sender', { phone_number: null }), 200).body).to.deep.equal({ phone_number: null });
      expect(expectStatus(await owner.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: null });
    });

    it("is 400 naming phone_number for a number that is not the organization's", async () => {
      const stranger = asCaller((await createOrg()).key);
      const theirs = expectStatus(await stranger.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      expectInvalid(await owner.put('/v1/sms-sender', { phone_number: theirs.phone_number }), 'phone_number');
      expectInvalid(await owner.put('/v1/sms-sender', { phone_number: uniqueNumber() }), 'phone_number');
      expect(expectStatus(await owner.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: null });
    });

    it('is 400 for something that is not a phone number, or no phone_number', async () => {
      expectInvalid(await owner.put('/v1/sms-sender', { phone_number: '4155550123' }), 'phone_number');
      expectInvalid(await owner.put('/v1/sms-sender', { phone_number: 4155550123 }), 'phone_number');
      expectInvalid(await owner.put('/v1/sms-sender', {}), 'phone_number');
    });

    it("inside a tenant, sets the tenant's own number, not the reseller's", async () => {
      const tenantId = await insertTenant(org);
      const inside = asCaller(org.key, { 'X-Tenant-Id': tenantId });
      const resellers = expectStatus(await owner.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      expectInvalid(await inside.put('/v1/sms-sender', { phone_number: resellers.phone_number }), 'phone_number');
      const tenants = expectStatus(await inside.post('/v1/phone-numbers', { phone_number: uniqueNumber() }), 201).body;
      expectStatus(await inside.put('/v1/sms-sender', { phone_number: tenants.phone_number }), 200);
      expect(expectStatus(await inside.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: tenants.phone_number });
      expect(expectStatus(await owner.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: null });
    });

    it('PUT needs settings', async () => {
      const res = await asCaller(await withoutSettings(org)).put('/v1/sms-sender', { phone_number: null });
      expect(expectError(res, 403, 'missing_capability').required).to.equal('settings');
    });
  });

  describe('GET /v1/messages', () => {
    let seq = 0;
    /** A text as the call engine writes it. */
    async function insertMessage(orgId: string, payerOrgId: string, fields: { callId?: string; chargeMicros?: number } = {}) {
      const id = `msg_${process.pid}_${seq++}`;
      await db.query(
        `INSERT INTO messages (id, org_id, payer_org_id, call_id, from_number, to_number, body, charge_micros)
         VALUES ($1, $2, $3, $4, '+14155550100', '+14155550199', 'See you Tuesday at 10:00.', $5)`,
        [id, orgId, payerOrgId, fields.callId ?? null, fields.chargeMicros ?? 10_000],
      );
      return id;
    }

    it("lists the texts newest first, with the charge in the paying organization's currency", async () => {
      const euro = await createOrg({ currency: 'EUR' });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await insertMessage(euro.id, euro.id, { callId: `call_${process.pid}_${seq}_${i}`, chargeMicros: 1_250_000 }));
      const { pages, items } = await walkList(asCaller(euro.key), '/v1/messages', 2);
      expect(pages).to.have.lengthOf(2);
      expect(items.map((m) => m.id)).to.deep.equal(newestFirst(items).map((m) => m.id));
      expect(items.map((m) => m.id)).to.have.members(ids);
      for (const message of items) {
        expect(message).to.have.all.keys('id', 'call_id', 'from', 'to', 'body', 'charge', 'currency', 'status', 'failure_reason', 'created_at');
        expect(message).to.include({
          from: '+14155550100',
          to: '+14155550199',
          body: 'See you Tuesday at 10:00.',
          charge: '1.250000',
          currency: 'EUR',
          status: 'sent',
          failure_reason: null,
        });
        expect(message.created_at).to.match(ISO_UTC);
      }
    });

    it("shows a tenant's texts inside the tenant, in the reseller's currency, and nowhere else", async () => {
      const reseller = await createOrg({ currency: 'GBP' });
      const tenantId = await insertTenant(reseller);
      await db.query(`UPDATE organizations SET currency = 'USD' WHERE id = $1`, [tenantId]);
      const id = await insertMessage(tenantId, reseller.id);
      const inside = asCaller(reseller.key, { 'X-Tenant-Id': tenantId });
      const [message] = expectStatus(await inside.get('/v1/messages'), 200).body.data;
      expect(message).to.include({ id, charge: '0.010000', currency: 'GBP' });
      expect(expectStatus(await asCaller(reseller.key).get('/v1/messages'), 200).body.data).to.deep.equal([]);
      expect(expectStatus(await owner.get('/v1/messages'), 200).body.data).to.deep.equal([]);
    });

    it('filters by call_id', async () => {
      const callId = `call_${process.pid}_${seq++}`;
      const wanted = await insertMessage(org.id, org.id, { callId });
      await insertMessage(org.id, org.id, { callId: `call_${process.pid}_${seq++}` });
      const listed = expectStatus(await owner.get(`/v1/messages?call_id=${callId}`), 200).body;
      expect(listed.data.map((m: { id: string }) => m.id)).to.deep.equal([wanted]);
      expect(listed.data[0].call_id).to.equal(callId);
      expect(expectStatus(await owner.get(`/v1/messages?call_id=call_none`), 200).body.data).to.deep.equal([]);
    });

    it('is 400 for unknown query parameters or a bad limit', async () => {
      expectInvalid(await owner.get('/v1/messages?to=%2B14155550199'), 'to');
      expectInvalid(await owner.get('/v1/messages?limit=abc'), 'limit');
    });

    it('is read only', async () => {
      expectError(await owner.post('/v1/messages', { to: '+14155550199', body: 'hi' }), 404, 'not_found');
    });
  });
});
