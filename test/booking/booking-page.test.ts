import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { app, asCaller, createOrg, expectError, expectStatus, insertTenant, keyWith, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid } from '../helpers/org-resource.js';

/** The public page, without any credential. */
async function publicPage(orgId: string) {
  return request(await app()).get(`/book/${orgId}`);
}

function expectHtml(res: request.Response): string {
  expectStatus(res, 200);
  expect(res.headers['content-type']).to.match(/^text\/html; charset=utf-8/);
  return res.text;
}

describe('booking page (CONTRACT.md "Other areas")', () => {
  let org: TestOrg;
  let owner: Caller;
  beforeEach(async () => {
    org = await createOrg({ name: 'Bright Smiles' });
    owner = asCaller(org.key);
  });

  describe('/v1/booking-page', () => {
    it('is enabled by default, without a headline, at /book/{org_id}', async () => {
      const page = expectStatus(await owner.get('/v1/booking-page'), 200).body;
      expect(page).to.deep.equal({ enabled: true, headline: null, url: `/book/${org.id}` });
    });

    it('PUT changes the headline and turns the page off and on', async () => {
      const headlined = expectStatus(await owner.put('/v1/booking-page', { headline: 'Book a cleaning' }), 200).body;
      expect(headlined).to.deep.equal({ enabled: true, headline: 'Book a cleaning', url: `/book/${org.id}` });
      expect(expectStatus(await owner.put('/v1/booking-page', { enabled: false }), 200).body).to.include({ enabled: false, headline: 'Book a cleaning' });
      expect(expectStatus(await owner.get('/v1/booking-page'), 200).body.enabled).to.equal(false);
      expectError(await publicPage(org.id), 404, 'booking_page_not_found');
      expectStatus(await owner.put('/v1/booking-page', { enabled: true, headline: null }), 200);
      expect(expectHtml(await publicPage(org.id))).to.include('Bright Smiles');
    });

    const bad: [string, Record<string, unknown>, string][] = [
      ['enabled that is not a boolean', { enabled: 'yes' }, 'enabled'],
      ['a headline that is not a string', { headline: 5 }, 'headline'],
      ['a headline too long', { headline: 'x'.repeat(201) }, 'headline'],
      ['an unknown field', { theme: 'dark' }, 'theme'],
    ];
    for (const [what, body, path] of bad) {
      it(`PUT is 400 for ${what}`, async () => {
        expectInvalid(await owner.put('/v1/booking-page', body), path);
      });
    }

    it('PUT is 400 with nothing to change', async () => {
      expectError(await owner.put('/v1/booking-page', {}), 400, 'invalid_request');
    });

    it('PUT needs settings', async () => {
      const limited = asCaller(await keyWith(org, ['operate', 'api_keys', 'webhooks']));
      expect(expectError(await limited.put('/v1/booking-page', { enabled: false }), 403, 'missing_capability').required).to.equal('settings');
      expectStatus(await limited.get('/v1/booking-page'), 200);
    });

    it('inside a tenant: PUT is 403 not_available_for_tenant; GET shows no page', async () => {
      const tenantId = await insertTenant(org);
      const inside = asCaller(org.key, { 'X-Tenant-Id': tenantId });
      expectError(await inside.put('/v1/booking-page', { enabled: true }), 403, 'not_available_for_tenant');
      expect(expectStatus(await inside.get('/v1/booking-page'), 200).body).to.deep.equal({ enabled: false, headline: null, url: null });
    });
  });

  describe('GET /book/{org_id}', () => {
    it("shows the organization's services and locations, without authentication", async () => {
      expectStatus(await owner.post('/v1/services', { name: 'Cleaning', duration_minutes: 45 }), 201);
      expectStatus(await owner.post('/v1/services', { name: 'Whitening', duration_minutes: 90 }), 201);
      expectStatus(await owner.post('/v1/locations', { name: 'Downtown', address: '1 Main Street' }), 201);
      const stranger = asCaller((await createOrg()).key);
      expectStatus(await stranger.post('/v1/services', { name: 'Somebody Else Service' }), 201);
      const html = expectHtml(await publicPage(org.id));
      expect(html).to.match(/^<!doctype html>/i);
      expect(html).to.include('<h1>Bright Smiles</h1>');
      expect(html).to.include('Cleaning').and.include('45 minutes');
      expect(html).to.include('Whitening').and.include('90 minutes');
      expect(html).to.include('Downtown').and.include('1 Main Street');
      expect(html).to.not.include('Somebody Else Service');
    });

    it('shows the headline when there is one', async () => {
      expectStatus(await owner.put('/v1/booking-page', { headline: 'Book your visit' }), 200);
      expect(expectHtml(await publicPage(org.id)))
        .to.include('<h1>Book your visit</h1>')
        .and.include('<title>Book your visit</title>');
    });

    it('escapes every string the organization wrote', async () => {
      expectStatus(await owner.post('/v1/services', { name: '<script>alert(1)</script>', description: '<img src=x onerror=alert(2)>' }), 201);
      expectStatus(await owner.post('/v1/locations', { name: "Tom & Jerry's", address: '"><iframe src=//evil>' }), 201);
      expectStatus(await owner.put('/v1/booking-page', { headline: '<b>Bold</b> offers' }), 200);
      const res = await publicPage(org.id);
      const html = expectHtml(res);
      expect(html).to.not.include('<script');
      expect(html).to.not.include('<img');
      expect(html).to.not.include('<iframe');
      expect(html).to.not.include('<b>');
      expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).to.include('&lt;img src=x onerror=alert(2)&gt;');
      expect(html).to.include('Tom &amp; Jerry&#39;s');
      expect(html).to.include('&quot;&gt;&lt;iframe src=//evil&gt;');
      expect(html).to.include('&lt;b&gt;Bold&lt;/b&gt; offers');
      expect(res.headers['content-security-policy']).to.include("default-src 'none'");
    });

    it('is 404 for an organization that does not exist', async () => {
      expectError(await publicPage('org_0000000000000000000000'), 404, 'booking_page_not_found');
      expectError(await publicPage('x'.repeat(300)), 404, 'booking_page_not_found');
    });

    it('is 404 for a tenant, whatever its settings', async () => {
      const tenantId = await insertTenant(org);
      await db.query('UPDATE organizations SET booking_page_enabled = true WHERE id = $1', [tenantId]);
      expectError(await publicPage(tenantId), 404, 'booking_page_not_found');
      expectStatus(await publicPage(org.id), 200);
    });
  });
});
