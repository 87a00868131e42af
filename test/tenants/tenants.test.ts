import { expect } from 'chai';
import request from 'supertest';
import { STARTER_SERVICES } from '../../src/tenants/industry-catalog.js';
import type { RinglaneApp } from '../../src/app.js';
import { app, asCaller, bearer, createOrg, expectError, expectStatus, keyWith, newApp, operator } from '../helpers/api.js';
import { createTenant, reseller } from '../helpers/tenants.js';

describe('tenants (SPEC.md §4.1, CONTRACT.md "Tenant")', () => {
  describe('who may use the tenant endpoints', () => {
    const routes: Array<[string, string, object?]> = [
      ['post', '/v1/tenants', { name: 'X', timezone: 'UTC', industry: 'dental' }],
      ['get', '/v1/tenants'],
      ['get', '/v1/tenants/ten_x'],
      ['patch', '/v1/tenants/ten_x', { name: 'Y' }],
      ['get', '/v1/tenants/ten_x/limits'],
      ['patch', '/v1/tenants/ten_x/limits', { max_concurrent_calls: 1 }],
    ];
    const call = (caller: ReturnType<typeof asCaller>, [method, path, body]: (typeof routes)[number]) =>
      method === 'get' ? caller.get(path) : (caller as any)[method](path, body);

    it('an ordinary organization gets 403 not_a_reseller on every one', async () => {
      const org = await createOrg();
      for (const route of routes) expectError(await call(asCaller(org.key), route), 403, 'not_a_reseller');
    });

    it('inside a tenant every one is 403 not_available_for_tenant', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      for (const route of routes) expectError(await call(owner.inside(tenant.id), route), 403, 'not_available_for_tenant');
    });

    it('creating and changing tenants needs settings: 403 missing_capability otherwise', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const operateOnly = asCaller(await keyWith(owner, ['operate']));
      expect(
        expectError(await operateOnly.post('/v1/tenants', { name: 'X', timezone: 'UTC', industry: 'dental' }), 403, 'missing_capability').required,
      ).to.equal('settings');
      expectError(await operateOnly.patch(`/v1/tenants/${tenant.id}`, { name: 'Z' }), 403, 'missing_capability');
      expectStatus(await operateOnly.get('/v1/tenants'), 200);
    });
  });

  describe('POST /v1/tenants', () => {
    it('creates the tenant with a main location, its industry’s starter services and a default appointment agent', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner, { name: 'Shiny Teeth', industry: 'dental', external_ref: 'crm-42' });
      expect(tenant).to.have.all.keys('id', 'name', 'timezone', 'industry', 'external_ref', 'disabled', 'created_at');
      expect(tenant).to.include({ name: 'Shiny Teeth', timezone: 'America/New_York', industry: 'dental', external_ref: 'crm-42', disabled: false });
      expect(tenant.id).to.match(/^ten_/);
      const inside = owner.inside(tenant.id);
      const locations = expectStatus(await inside.get('/v1/locations'), 200).body.data;
      expect(locations.map((l: any) => [l.name, l.is_main])).to.deep.equal([['Main location', true]]);
      const services = expectStatus(await inside.get('/v1/services?limit=100'), 200).body.data;
      expect(services.map((s: any) => s.name).sort()).to.deep.equal(STARTER_SERVICES.dental.map((s) => s.name).sort());
      const agents = expectStatus(await inside.get('/v1/agents'), 200).body.data;
      expect(agents).to.have.lengthOf(1);
      expect(agents[0].kind).to.equal('appointment');
      // The reseller's own organization got none of it.
      expect(expectStatus(await owner.as.get('/v1/agents'), 200).body.data).to.deep.equal([]);
    });

    it('gives each industry its own starter services', async () => {
      const owner = await reseller();
      const salon = await createTenant(owner, { industry: 'salon' });
      const names = expectStatus(await owner.inside(salon.id).get('/v1/services'), 200).body.data.map((s: any) => s.name);
      expect(names.sort()).to.deep.equal(STARTER_SERVICES.salon.map((s) => s.name).sort());
    });

    it('answers 400 naming the field: unknown industry (listing the allowed ones), bad time zone, missing name, unknown field', async () => {
      const owner = await reseller();
      const post = (body: object) => owner.as.post('/v1/tenants', { name: 'X', timezone: 'UTC', industry: 'dental', ...body });
      const industry = expectError(await post({ industry: 'bakery' }), 400, 'invalid_request');
      expect(industry.details[0].path).to.equal('industry');
      expect(industry.details[0].message).to.contain('real_estate').and.contain('home_services');
      expect(expectError(await post({ timezone: 'Mars/Olympus' }), 400, 'invalid_request').details[0].path).to.equal('timezone');
      expect(expectError(await post({ name: undefined }), 400, 'invalid_request').details[0].path).to.equal('name');
      expect(expectError(await post({ plan: 'gold' }), 400, 'invalid_request').details[0].path).to.equal('plan');
    });

    it('answers 409 tenant_limit_reached at the operator-set count, race-free under concurrent creates', async () => {
      const owner = await reseller({ tenant_limit: 3 });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => owner.as.post('/v1/tenants', { name: `T${i}`, timezone: 'UTC', industry: 'other' })),
      );
      expect(results.filter((r) => r.status === 201)).to.have.lengthOf(3);
      for (const refused of results.filter((r) => r.status !== 201)) expectError(refused, 409, 'tenant_limit_reached');
      expect(expectStatus(await owner.as.get('/v1/tenants'), 200).body.data).to.have.lengthOf(3);
    });
  });

  describe('reading and changing tenants', () => {
    it('lists the reseller’s tenants newest first with external_ref, paginated, filterable by external_ref', async () => {
      const owner = await reseller();
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await createTenant(owner, { name: `T${i}`, external_ref: `ref-${i}` }));
      const page1 = expectStatus(await owner.as.get('/v1/tenants?limit=2'), 200).body;
      expect(page1.data.map((t: any) => t.id)).to.deep.equal([made[2].id, made[1].id]);
      expect(page1.data[0].external_ref).to.equal('ref-2');
      const page2 = expectStatus(await owner.as.get(`/v1/tenants?limit=2&cursor=${page1.next_cursor}`), 200).body;
      expect(page2).to.deep.equal({ data: [made[0]], next_cursor: null });
      const filtered = expectStatus(await owner.as.get('/v1/tenants?external_ref=ref-1'), 200).body.data;
      expect(filtered.map((t: any) => t.id)).to.deep.equal([made[1].id]);
    });

    it('PATCH renames, re-zones and re-refs (null clears the ref)', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner, { external_ref: 'old' });
      const patched = expectStatus(
        await owner.as.patch(`/v1/tenants/${tenant.id}`, { name: 'New name', timezone: 'Europe/Berlin', external_ref: 'new' }),
        200,
      ).body;
      expect(patched).to.include({ name: 'New name', timezone: 'Europe/Berlin', external_ref: 'new' });
      expect(expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { external_ref: null }), 200).body.external_ref).to.equal(null);
      expect(expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}`), 200).body.name).to.equal('New name');
      expectError(await owner.as.patch(`/v1/tenants/${tenant.id}`, {}), 400, 'invalid_request');
      expectError(await owner.as.patch(`/v1/tenants/${tenant.id}`, { timezone: 'Nowhere' }), 400, 'invalid_request');
    });

    it('another reseller’s tenant is 404 tenant_not_found, in the path and in X-Tenant-Id', async () => {
      const [mine, theirs] = [await reseller(), await reseller()];
      const tenant = await createTenant(theirs);
      expectError(await mine.as.get(`/v1/tenants/${tenant.id}`), 404, 'tenant_not_found');
      expectError(await mine.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 404, 'tenant_not_found');
      expectError(await mine.as.get(`/v1/tenants/${tenant.id}/limits`), 404, 'tenant_not_found');
      expectError(await mine.inside(tenant.id).get('/v1/contacts'), 404, 'tenant_not_found');
      expectError(await mine.inside('ten_doesnotexist').get('/v1/contacts'), 404, 'tenant_not_found');
      expect(expectStatus(await theirs.as.get(`/v1/tenants/${tenant.id}`), 200).body.disabled).to.equal(false);
    });

    it('acting inside a tenant applies every organization endpoint to the tenant only', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const contact = expectStatus(await owner.inside(tenant.id).post('/v1/contacts', { name: 'Ann', phone_number: '+14155550111' }), 201).body;
      expect(expectStatus(await owner.inside(tenant.id).get('/v1/contacts'), 200).body.data.map((c: any) => c.id)).to.deep.equal([contact.id]);
      expect(expectStatus(await owner.as.get('/v1/contacts'), 200).body.data).to.deep.equal([]);
      expectError(await owner.as.get(`/v1/contacts/${contact.id}`), 404, 'contact_not_found');
      expect(expectStatus(await owner.inside(tenant.id).get('/v1/organization'), 200).body).to.include({ id: tenant.id, name: tenant.name });
    });
  });

  describe('disabled tenants (SPEC.md §3.1)', () => {
    it('keeps reads working, refuses every change with 403 tenant_disabled, and resumes when re-enabled', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      expectStatus(await inside.post('/v1/contacts', { name: 'Before', phone_number: '+14155550112' }), 201);
      expect(expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 200).body.disabled).to.equal(true);
      expectStatus(await inside.get('/v1/contacts'), 200);
      expectStatus(await inside.get('/v1/calls'), 200);
      expectError(await inside.post('/v1/contacts', { name: 'After', phone_number: '+14155550113' }), 403, 'tenant_disabled');
      expectError(await inside.patch('/v1/organization', { name: 'Renamed' }), 403, 'tenant_disabled');
      expectError(await inside.post('/v1/agents', { name: 'Nope' }), 403, 'tenant_disabled');
      expect(expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: false }), 200).body.disabled).to.equal(false);
      expectStatus(await inside.post('/v1/contacts', { name: 'After', phone_number: '+14155550113' }), 201);
    });

    it('a disable through one API process holds at once in another that had the tenant cached, and so does the enable', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const [a, b] = [await newApp(), await newApp()];
      try {
        const inside = (instance: RinglaneApp) => (method: 'post' | 'patch', path: string, body: object) =>
          request(instance.app)[method](path).set('Authorization', bearer(owner.key)).set('X-Tenant-Id', tenant.id).send(body);
        const contact = (n: number) => ({ name: `Contact ${n}`, phone_number: `+1415555${String(1200 + n)}` });
        // Process b acts in the tenant (the tenant cached there), a disables it.
        expectStatus(await inside(b)('post', '/v1/contacts', contact(1)), 201);
        expectStatus(await request(a.app).patch(`/v1/tenants/${tenant.id}`).set('Authorization', bearer(owner.key)).send({ disabled: true }), 200);
        expectError(await inside(b)('post', '/v1/contacts', contact(2)), 403, 'tenant_disabled');
        expectError(await inside(b)('post', '/v1/contacts', contact(3)), 403, 'tenant_disabled');
        expectStatus(await request(a.app).patch(`/v1/tenants/${tenant.id}`).set('Authorization', bearer(owner.key)).send({ disabled: false }), 200);
        expectStatus(await inside(b)('post', '/v1/contacts', contact(4)), 201);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('a tenant never has a public booking page; PUT /v1/booking-page inside it is 403 not_available_for_tenant', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const page = await request(await app()).get(`/book/${tenant.id}`);
      expect(page.status).to.equal(404);
      expectError(await owner.inside(tenant.id).put('/v1/booking-page', { enabled: true }), 403, 'not_available_for_tenant');
      expect((await request(await app()).get(`/book/${owner.id}`)).status).to.equal(200);
    });
  });

  describe('outbound limits (SPEC.md §2.3)', () => {
    it('GET shows the values and the reseller’s ceiling; PATCH within it sets them; above it is 422 above_reseller_limit with field and limit', async () => {
      const owner = await reseller({ ceiling: { max_concurrent_calls: 5, max_calls_per_hour: 100 } });
      const tenant = await createTenant(owner);
      const limits = expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/limits`), 200).body;
      expect(limits).to.deep.equal({
        max_concurrent_calls: 5,
        max_calls_per_hour: 100,
        ceiling: { max_concurrent_calls: 5, max_calls_per_hour: 100 },
        monthly_spend_limit: null,
        spent_this_month: '0.000000',
        currency: 'USD',
      });
      const set = expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_concurrent_calls: 2, max_calls_per_hour: 100 }), 200).body;
      expect(set).to.include({ max_concurrent_calls: 2, max_calls_per_hour: 100 });
      const above = expectError(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_calls_per_hour: 101 }), 422, 'above_reseller_limit');
      expect(above).to.include({ field: 'max_calls_per_hour', limit: 100 });
      expect(expectError(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_concurrent_calls: 6 }), 422, 'above_reseller_limit')).to.include({
        field: 'max_concurrent_calls',
        limit: 5,
      });
      expectError(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_concurrent_calls: 0 }), 400, 'invalid_request');
      expectError(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_concurrent_calls: '2' }), 400, 'invalid_request');
      expect(expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/limits`), 200).body.max_concurrent_calls).to.equal(2);
    });

    it('a reseller lowering its ceiling is seen in the tenant’s ceiling and caps the limits in force; raised again, the tenant’s own apply', async () => {
      const owner = await reseller({ ceiling: { max_concurrent_calls: 5, max_calls_per_hour: 100 } });
      const tenant = await createTenant(owner);
      const setCeiling = async (ceiling: object) =>
        request(await app())
          .patch(`/admin/v1/orgs/${owner.id}`)
          .set('Authorization', operator())
          .send({ ceiling })
          .expect(200);
      await setCeiling({ max_concurrent_calls: 3 });
      expect(expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/limits`), 200).body).to.deep.equal({
        max_concurrent_calls: 3,
        max_calls_per_hour: 100,
        ceiling: { max_concurrent_calls: 3, max_calls_per_hour: 100 },
        monthly_spend_limit: null,
        spent_this_month: '0.000000',
        currency: 'USD',
      });
      await setCeiling({ max_concurrent_calls: 8 });
      expect(expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/limits`), 200).body).to.deep.include({ max_concurrent_calls: 5 });
    });
  });
});
