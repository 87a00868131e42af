import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { asCaller, createOrg, expectError, expectStatus, walkList, type Caller, type TestOrg } from '../helpers/api.js';
import { behavesLikeAnOrgResource, expectInvalid, uniqueNumber } from '../helpers/org-resource.js';

describe('contacts (CONTRACT.md "Other areas": POST /v1/contacts)', () => {
  behavesLikeAnOrgResource({
    path: '/v1/contacts',
    resource: 'contact',
    idPrefix: 'con',
    capability: 'operate',
    fields: ['id', 'name', 'phone_number', 'email', 'metadata', 'created_at', 'updated_at'],
    create: (n) => ({ name: `Contact ${n}`, phone_number: uniqueNumber(), email: `c${n}@example.com`, metadata: { n, tags: ['vip'] } }),
    update: async () => ({ name: 'Renamed', email: null, metadata: { tier: 'gold' } }),
  });

  let org: TestOrg;
  let owner: Caller;
  before(async () => {
    org = await createOrg();
    owner = asCaller(org.key);
  });

  it('defaults email to null and metadata to {}', async () => {
    const contact = expectStatus(await owner.post('/v1/contacts', { name: 'Ann', phone_number: uniqueNumber() }), 201).body;
    expect(contact).to.include({ email: null });
    expect(contact.metadata).to.deep.equal({});
  });

  describe('one contact per phone number in an organization', () => {
    it('is 409 contact_exists for a second contact with the number', async () => {
      const phone = uniqueNumber();
      expectStatus(await owner.post('/v1/contacts', { name: 'First', phone_number: phone }), 201);
      expectError(await owner.post('/v1/contacts', { name: 'Second', phone_number: phone }), 409, 'contact_exists');
    });

    it('is 409 contact_exists when a PATCH moves a contact onto a taken number', async () => {
      const phone = uniqueNumber();
      expectStatus(await owner.post('/v1/contacts', { name: 'First', phone_number: phone }), 201);
      const other = expectStatus(await owner.post('/v1/contacts', { name: 'Other', phone_number: uniqueNumber() }), 201).body;
      expectError(await owner.patch(`/v1/contacts/${other.id}`, { phone_number: phone }), 409, 'contact_exists');
      expect(expectStatus(await owner.get(`/v1/contacts/${other.id}`), 200).body).to.deep.equal(other);
    });

    it('lets another organization have a contact with the same number', async () => {
      const phone = uniqueNumber();
      expectStatus(await owner.post('/v1/contacts', { name: 'Mine', phone_number: phone }), 201);
      expectStatus(await asCaller((await createOrg()).key).post('/v1/contacts', { name: 'Theirs', phone_number: phone }), 201);
    });
  });

  it('filters the list by phone_number', async () => {
    const phone = uniqueNumber();
    const wanted = expectStatus(await owner.post('/v1/contacts', { name: 'Wanted', phone_number: phone }), 201).body;
    expectStatus(await owner.post('/v1/contacts', { name: 'Noise', phone_number: uniqueNumber() }), 201);
    const { items } = await walkList(owner, `/v1/contacts?phone_number=${encodeURIComponent(phone)}`, 10);
    expect(items).to.deep.equal([wanted]);
    const stranger = asCaller((await createOrg()).key);
    expect((await walkList(stranger, `/v1/contacts?phone_number=${encodeURIComponent(phone)}`, 10)).items).to.deep.equal([]);
    expectInvalid(await owner.get('/v1/contacts?phone_number=555-0123'), 'phone_number');
  });

  it('reads the phone_number filter as the api guide writes it, with an unencoded + (which a query string decodes as a space)', async () => {
    const phone = uniqueNumber();
    const wanted = expectStatus(await owner.post('/v1/contacts', { name: 'Pasted', phone_number: phone }), 201).body;
    for (const given of [phone, `%2B${phone.slice(1)}`, `%20${phone.slice(1)}`]) {
      expect(expectStatus(await owner.get(`/v1/contacts?phone_number=${given}`), 200).body, given).to.deep.equal({ data: [wanted], next_cursor: null });
    }
    // Only a leading space stands for the +; a body takes the number as written.
    for (const given of [`++${phone.slice(1)}`, `%20%20${phone.slice(1)}`, `${phone.slice(0, 4)}+${phone.slice(4)}`, phone.slice(1)]) {
      expectInvalid(await owner.get(`/v1/contacts?phone_number=${given}`), 'phone_number');
    }
    expectInvalid(await owner.post('/v1/contacts', { name: 'Spaced', phone_number: ` ${uniqueNumber().slice(1)}` }), 'phone_number');
  });

  describe('metadata', () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

    it('keeps any JSON values, up to 50 keys', async () => {
      const metadata = { ...keys(48), nested: { a: [1, 'two', null] }, flag: true };
      const contact = expectStatus(await owner.post('/v1/contacts', { name: 'Meta', phone_number: uniqueNumber(), metadata }), 201).body;
      expect(contact.metadata).to.deep.equal(metadata);
    });

    it('is 400 with more than 50 keys, or when not an object', async () => {
      expectInvalid(await owner.post('/v1/contacts', { name: 'Meta', phone_number: uniqueNumber(), metadata: keys(51) }), 'metadata');
      for (const metadata of [['a'], 'text', 5, null]) {
        expectInvalid(await owner.post('/v1/contacts', { name: 'Meta', phone_number: uniqueNumber(), metadata }), 'metadata');
      }
    });
  });

  describe('refuses bad input with 400 naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a missing name', { phone_number: '+14155550123' }, 'name'],
      ['a missing phone number', { name: 'Ann' }, 'phone_number'],
      ['a name that is not a string', { name: ['Ann'], phone_number: '+14155550123' }, 'name'],
      ['a phone number that is a number', { name: 'Ann', phone_number: 14155550123 }, 'phone_number'],
      ['a phone number without +', { name: 'Ann', phone_number: '14155550123' }, 'phone_number'],
      ['a phone number starting +0', { name: 'Ann', phone_number: '+04155550123' }, 'phone_number'],
      ['a phone number with dashes', { name: 'Ann', phone_number: '+1-415-555-0123' }, 'phone_number'],
      ['a phone number too short', { name: 'Ann', phone_number: '+12345' }, 'phone_number'],
      ['an email that is not one', { name: 'Ann', phone_number: '+14155550123', email: 'ann-at-example' }, 'email'],
      ['an email that is a number', { name: 'Ann', phone_number: '+14155550123', email: 5 }, 'email'],
      ['an unknown field', { name: 'Ann', phone_number: '+14155550123', age: 40 }, 'age'],
    ];
    for (const [what, body, path] of cases) {
      it(`on create: ${what}`, async () => {
        expectInvalid(await owner.post('/v1/contacts', body), path);
      });
    }

    it('names every bad field at once', async () => {
      const error = expectError(await owner.post('/v1/contacts', { phone_number: 'nope', email: 'nope' }), 400, 'invalid_request');
      expect(error.details.map((d: { path: string }) => d.path)).to.include.members(['name', 'phone_number', 'email']);
    });

    it('on update', async () => {
      const contact = expectStatus(await owner.post('/v1/contacts', { name: 'Ann', phone_number: uniqueNumber() }), 201).body;
      expectInvalid(await owner.patch(`/v1/contacts/${contact.id}`, { phone_number: '0123' }), 'phone_number');
      expectInvalid(await owner.patch(`/v1/contacts/${contact.id}`, { name: '' }), 'name');
    });
  });

  it('DELETE is 409 contact_in_use while a campaign holds the contact', async () => {
    const contact = expectStatus(await owner.post('/v1/contacts', { name: 'Held', phone_number: uniqueNumber() }), 201).body;
    const agent = expectStatus(await owner.post('/v1/agents', { name: 'Caller' }), 201).body;
    const campaignId = `cmp_${contact.id}`;
    await db.query('INSERT INTO campaigns (id, org_id, name, agent_id) VALUES ($1, $2, $3, $4)', [campaignId, org.id, 'Spring', agent.id]);
    await db.query('INSERT INTO campaign_contacts (campaign_id, contact_id, position) VALUES ($1, $2, 0)', [campaignId, contact.id]);
    expectError(await owner.delete(`/v1/contacts/${contact.id}`), 409, 'contact_in_use');
    expectStatus(await owner.get(`/v1/contacts/${contact.id}`), 200);
    await db.query('DELETE FROM campaigns WHERE id = $1', [campaignId]);
    expectStatus(await owner.delete(`/v1/contacts/${contact.id}`), 204);
  });
});
