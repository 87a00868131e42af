import { expect } from 'chai';
import request from 'supertest';
import {
  app,
  asCaller,
  createOrg,
  expectError,
  expectStatus,
  insertTenant,
  keyWith,
  listApiKeys,
  operator,
  sharedApp,
  uniqueEmail,
  walkList,
  type Caller,
  type TestOrg,
} from '../helpers/api.js';
import { CLOSED_AREA_REQUESTS } from '../helpers/tenants.js';
import { expectInvalid, ISO_UTC, newestFirst } from '../helpers/org-resource.js';

const MONEY = /^-?\d+\.\d{6}$/;

/** Credits (or, negative, debits) `org` through the operator's admin API. */
async function adjustBalance(org: TestOrg, amount: string): Promise<void> {
  await request(await app())
    .post(`/admin/v1/orgs/${org.id}/balance`)
    .set('Authorization', operator())
    .send({ amount })
    .expect(200);
}

/** The areas CONTRACT.md closes inside a tenant, as requests a reseller's owner key can make. */
function closedAreas(reseller: () => TestOrg): [string, (caller: Caller) => Promise<request.Response>][] {
  return [...CLOSED_AREA_REQUESTS, ['DELETE /v1/api-keys/{id}', (c) => c.delete(`/v1/api-keys/${reseller().keyId}`)]];
}

describe('areas closed to tenants (SPEC.md §4.1 rule 2; CONTRACT.md "Other areas: closed to tenants")', () => {
  describe('the tenant rule', () => {
    let reseller: TestOrg;
    let tenantId: string;
    let outside: Caller;
    let inside: Caller;
    before(async () => {
      reseller = await createOrg({ reseller: true, balance: '5' });
      tenantId = await insertTenant(reseller);
      outside = asCaller(reseller.key);
      inside = asCaller(reseller.key, { 'X-Tenant-Id': tenantId });
    });

    it('the tenant header is accepted: an open area answers inside the tenant', async () => {
      expect(expectStatus(await inside.get('/v1/organization'), 200).body.id).to.equal(tenantId);
    });

    for (const [name, send] of closedAreas(() => reseller)) {
      it(`${name} is 403 not_available_for_tenant inside a tenant`, async () => {
        expectError(await send(inside), 403, 'not_available_for_tenant');
      });
    }

    it('the tenant rule comes before the capability check and before validation', async () => {
      const reader = await keyWith(reseller, []);
      const readerInside = asCaller(reader, { 'X-Tenant-Id': tenantId });
      expectError(await readerInside.post('/v1/invites', { email: 'x@example.com', capabilities: [] }), 403, 'not_available_for_tenant');
      expectError(await readerInside.post('/v1/api-keys', { label: 'x', permissions: [] }), 403, 'not_available_for_tenant');
      expectError(await readerInside.delete(`/v1/api-keys/${reseller.keyId}`), 403, 'not_available_for_tenant');
      expectError(await inside.post('/v1/invites', { nonsense: true }), 403, 'not_available_for_tenant');
      expectError(await inside.get('/v1/payments?limit=0'), 403, 'not_available_for_tenant');
    });

    it('a refused write inside a tenant changes nothing', async () => {
      // Every request, refused or not, uses the owner key, and the batched flush writes its
      // last_used_at whenever its timer fires: the keys are compared without it.
      const keys = async () => expectStatus(await outside.get('/v1/api-keys?limit=100'), 200).body.data.map(({ last_used_at: _used, ...key }: any) => key);
      const keysBefore = await keys();
      const email = uniqueEmail('refused');
      expectError(await inside.post('/v1/invites', { email, capabilities: [] }), 403, 'not_available_for_tenant');
      expectError(await inside.post('/v1/api-keys', { label: 'refused', permissions: [] }), 403, 'not_available_for_tenant');
      expectError(await inside.delete(`/v1/api-keys/${reseller.keyId}`), 403, 'not_available_for_tenant');
      // The flush that made this test fail now and then, made on purpose before the second read.
      await (await sharedApp()).credentials.flushLastUsed();
      expect(await keys()).to.deep.equal(keysBefore);
      expect(expectStatus(await outside.get('/v1/invites?limit=100'), 200).body.data.map((i: any) => i.email)).to.not.include(email);
      expectStatus(await outside.get('/v1/balance'), 200); // the owner key was not revoked
    });

    it('the same reseller, without the tenant header, reaches every area', async () => {
      for (const path of ['/v1/balance', '/v1/payments', '/v1/receipts', '/v1/plans', '/v1/add-ons', '/v1/referrals', '/v1/invites', '/v1/api-keys']) {
        expectStatus(await outside.get(path), 200);
      }
      expectStatus(await outside.post('/v1/invites', { email: uniqueEmail('outside'), capabilities: ['operate'] }), 201);
      const key = expectStatus(await outside.post('/v1/api-keys', { label: 'outside', permissions: [] }), 201).body;
      expectStatus(await outside.delete(`/v1/api-keys/${key.key_id}`), 204);
    });
  });

  describe('for an ordinary organization', () => {
    it('every area answers, reads without any capability', async () => {
      const org = await createOrg({ balance: '1' });
      const reader = asCaller(await keyWith(org, []));
      for (const path of ['/v1/balance', '/v1/payments', '/v1/receipts', '/v1/plans', '/v1/add-ons', '/v1/referrals', '/v1/invites', '/v1/api-keys']) {
        expectStatus(await reader.get(path), 200);
      }
      const owner = asCaller(org.key);
      expectStatus(await owner.post('/v1/invites', { email: uniqueEmail('ordinary'), capabilities: [] }), 201);
      const key = expectStatus(await owner.post('/v1/api-keys', { label: 'ordinary', permissions: [] }), 201).body;
      expectStatus(await owner.delete(`/v1/api-keys/${key.key_id}`), 204);
      expect((await listApiKeys(org.key)).body.data.map((k: any) => k.key_id)).to.not.include(key.key_id);
    });
  });

  describe('GET /v1/payments and GET /v1/receipts', () => {
    let org: TestOrg;
    let owner: Caller;
    before(async () => {
      org = await createOrg({ balance: '12.34' });
      owner = asCaller(org.key);
      await adjustBalance(org, '1.5');
      await adjustBalance(org, '-2'); // a debit is not a payment
      await adjustBalance(org, '0.000001');
    });

    it('payments: the credits of the ledger, newest first, with 6-decimal amounts', async () => {
      const page = expectStatus(await owner.get('/v1/payments'), 200).body;
      expect(page).to.have.all.keys('data', 'next_cursor');
      expect(page.next_cursor).to.equal(null);
      expect(page.data.map((p: any) => [p.amount, p.description])).to.deep.equal([
        ['0.000001', 'operator adjustment'],
        ['1.500000', 'operator adjustment'],
        ['12.340000', 'opening balance'],
      ]);
      for (const payment of page.data) {
        expect(payment).to.have.all.keys('id', 'amount', 'currency', 'description', 'created_at');
        expect(payment.id).to.match(/^led_[0-9A-Za-z]{22}$/);
        expect(payment.amount).to.match(MONEY);
        expect(payment.currency).to.equal('USD');
        expect(payment.created_at).to.match(ISO_UTC);
      }
      expect(page.data).to.deep.equal(newestFirst(page.data));
    });

    it('receipts: one per payment, in the same order, numbered', async () => {
      const payments = expectStatus(await owner.get('/v1/payments'), 200).body.data;
      const page = expectStatus(await owner.get('/v1/receipts'), 200).body;
      expect(page.next_cursor).to.equal(null);
      expect(page.data).to.have.lengthOf(payments.length);
      page.data.forEach((receipt: any, i: number) => {
        expect(receipt).to.have.all.keys('id', 'number', 'amount', 'currency', 'issued_at');
        expect(receipt).to.deep.equal({
          id: payments[i].id,
          number: receipt.number,
          amount: payments[i].amount,
          currency: 'USD',
          issued_at: payments[i].created_at,
        });
        expect(receipt.number).to.match(/^R-[0-9A-Za-z]{10}$/);
      });
      expect(new Set(page.data.map((r: any) => r.number)).size).to.equal(page.data.length);
    });

    for (const path of ['/v1/payments', '/v1/receipts']) {
      it(`${path} pages by limit and cursor, each item once`, async () => {
        const all = expectStatus(await owner.get(path), 200).body.data;
        const { pages, items } = await walkList(owner, path, 2);
        expect(pages.map((p) => p.data.length)).to.deep.equal([2, 1]);
        expect(items).to.deep.equal(all);
        expectInvalid(await owner.get(`${path}?limit=0`), 'limit');
        expectInvalid(await owner.get(`${path}?limit=101`), 'limit');
        expectInvalid(await owner.get(`${path}?cursor=nonsense`), 'cursor');
        expectInvalid(await owner.get(`${path}?kind=call`), 'kind');
      });
    }

    it('shows the organization currency, and only its own credits', async () => {
      const euro = await createOrg({ currency: 'EUR', balance: '3' });
      const theirs = expectStatus(await asCaller(euro.key).get('/v1/payments'), 200).body.data;
      expect(theirs.map((p: any) => [p.amount, p.currency])).to.deep.equal([['3.000000', 'EUR']]);
      expect(expectStatus(await asCaller(euro.key).get('/v1/receipts'), 200).body.data[0].currency).to.equal('EUR');
      const ours = expectStatus(await owner.get('/v1/payments'), 200).body.data.map((p: any) => p.id);
      expect(ours).to.not.include(theirs[0].id);
    });

    it('are empty for an organization that was never credited', async () => {
      const empty = asCaller((await createOrg()).key);
      expect(expectStatus(await empty.get('/v1/payments'), 200).body).to.deep.equal({ data: [], next_cursor: null });
      expect(expectStatus(await empty.get('/v1/receipts'), 200).body).to.deep.equal({ data: [], next_cursor: null });
    });
  });

  describe('GET /v1/plans, /v1/add-ons and /v1/referrals', () => {
    it('plans: pay as you go, at the organization own rates', async () => {
      const org = await createOrg({ currency: 'EUR', rates: { per_minute: '0.12', per_text: '0.015' } });
      const page = expectStatus(await asCaller(org.key).get('/v1/plans'), 200).body;
      expect(page.next_cursor).to.equal(null);
      expect(page.data).to.have.lengthOf(1);
      const [plan] = page.data;
      expect(plan).to.have.all.keys('id', 'name', 'description', 'rates', 'currency', 'current');
      expect(plan).to.deep.include({ id: 'pay_as_you_go', rates: { per_minute: '0.120000', per_text: '0.015000' }, currency: 'EUR', current: true });
    });

    it('add-ons: the catalog, page by page', async () => {
      const caller = asCaller((await createOrg()).key);
      const page = expectStatus(await caller.get('/v1/add-ons'), 200).body;
      expect(page.next_cursor).to.equal(null);
      expect(page.data.map((a: any) => a.id)).to.include.members(['extra_numbers', 'call_recording']);
      for (const addOn of page.data) expect(addOn).to.have.all.keys('id', 'name', 'description');
      const { pages, items } = await walkList(caller, '/v1/add-ons', 1);
      expect(pages).to.have.lengthOf(page.data.length);
      expect(items).to.deep.equal(page.data);
      expectInvalid(await caller.get('/v1/add-ons?cursor=nonsense'), 'cursor');
    });

    it('referrals: an empty list (there is no referral program)', async () => {
      const caller = asCaller((await createOrg()).key);
      expect(expectStatus(await caller.get('/v1/referrals'), 200).body).to.deep.equal({ data: [], next_cursor: null });
      expect(expectStatus(await caller.get('/v1/referrals?limit=5'), 200).body).to.deep.equal({ data: [], next_cursor: null });
      expectInvalid(await caller.get('/v1/referrals?limit=101'), 'limit');
      expectInvalid(await caller.get('/v1/referrals?surprise=1'), 'surprise');
    });
  });
});
