import { expect } from 'chai';
import { asCaller, createOrg, expectStatus, type Caller } from '../helpers/api.js';
import { behavesLikeAnOrgResource, expectInvalid } from '../helpers/org-resource.js';

describe('locations (/v1/locations)', () => {
  behavesLikeAnOrgResource({
    path: '/v1/locations',
    resource: 'location',
    idPrefix: 'loc',
    capability: 'settings',
    fields: ['id', 'name', 'address', 'is_main', 'created_at', 'updated_at'],
    create: (n) => ({ name: `Branch ${n}`, address: `${n} Main Street, Springfield` }),
    update: async () => ({ address: '1 New Road' }),
  });

  let owner: Caller;
  before(async () => {
    owner = asCaller((await createOrg()).key);
  });

  it('defaults address to empty; a location made through the API is not the main one', async () => {
    const location = expectStatus(await owner.post('/v1/locations', { name: 'Downtown' }), 201).body;
    expect(location).to.include({ name: 'Downtown', address: '', is_main: false });
  });

  describe('refuses bad input with 400 naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a missing name', { address: 'Somewhere' }, 'name'],
      ['a name that is not a string', { name: 12 }, 'name'],
      ['an address that is not a string', { name: 'A', address: { street: 'x' } }, 'address'],
      ['is_main, which is not settable', { name: 'A', is_main: true }, 'is_main'],
    ];
    for (const [what, body, path] of cases) {
      it(what, async () => {
        expectInvalid(await owner.post('/v1/locations', body), path);
      });
    }
  });
});

describe('services (/v1/services)', () => {
  behavesLikeAnOrgResource({
    path: '/v1/services',
    resource: 'service',
    idPrefix: 'svc',
    capability: 'settings',
    fields: ['id', 'name', 'description', 'duration_minutes', 'created_at', 'updated_at'],
    create: (n) => ({ name: `Cleaning ${n}`, description: 'A thorough one', duration_minutes: 45 }),
    update: async () => ({ duration_minutes: 60, description: '' }),
  });

  let owner: Caller;
  before(async () => {
    owner = asCaller((await createOrg()).key);
  });

  it('lasts 30 minutes unless told, with an empty description', async () => {
    const service = expectStatus(await owner.post('/v1/services', { name: 'Haircut' }), 201).body;
    expect(service).to.include({ name: 'Haircut', description: '', duration_minutes: 30 });
  });

  it('accepts durations from 5 to 600 minutes', async () => {
    for (const minutes of [5, 600]) {
      expect(expectStatus(await owner.post('/v1/services', { name: 'Edge', duration_minutes: minutes }), 201).body.duration_minutes).to.equal(minutes);
    }
  });

  describe('refuses bad input with 400 naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a missing name', { duration_minutes: 30 }, 'name'],
      ['a duration under 5 minutes', { name: 'A', duration_minutes: 4 }, 'duration_minutes'],
      ['a duration over 600 minutes', { name: 'A', duration_minutes: 601 }, 'duration_minutes'],
      ['a fractional duration', { name: 'A', duration_minutes: 12.5 }, 'duration_minutes'],
      ['a duration that is a string', { name: 'A', duration_minutes: '30' }, 'duration_minutes'],
      ['a description that is not a string', { name: 'A', description: 3 }, 'description'],
      ['an unknown field', { name: 'A', price: '10.00' }, 'price'],
    ];
    for (const [what, body, path] of cases) {
      it(what, async () => {
        expectInvalid(await owner.post('/v1/services', body), path);
      });
    }

    it('on update', async () => {
      const service = expectStatus(await owner.post('/v1/services', { name: 'Haircut' }), 201).body;
      expectInvalid(await owner.patch(`/v1/services/${service.id}`, { duration_minutes: 0 }), 'duration_minutes');
    });
  });
});
