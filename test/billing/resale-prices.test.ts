import { expect } from 'chai';
import { asCaller, createOrg, expectError, expectStatus, keyWith } from '../helpers/api.js';
import { expectInvalid } from '../helpers/org-resource.js';
import { db } from '../helpers/db.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { uniquePhone, waitForCalls, withCallsWorker } from '../helpers/voice.js';
import { chargeForSeconds, formatMoney, parseMoney } from '../../src/lib/money.js';

// CONTRACT.md §4 "Resale prices": PUT/GET /v1/tenants/{id}/prices, `billable` on a tenant's
// call record and in its usage, exact to the micro-unit.

const PRICE_FIELDS = ['tenant_id', 'per_minute', 'per_text', 'currency'];
const pricesPath = (tenantId: string) => `/v1/tenants/${tenantId}/prices`;

async function getPrices(owner: Reseller, tenantId: string) {
  const body = expectStatus(await owner.as.get(pricesPath(tenantId)), 200).body;
  expect(body).to.have.all.keys(...PRICE_FIELDS);
  return body;
}

describe('resale prices (CONTRACT.md §4 "Resale prices")', () => {
  describe('PUT and GET /v1/tenants/{id}/prices', () => {
    it("shows the reseller's own rates until prices are set, then the prices set, in the reseller's currency", async () => {
      const owner = await reseller({ currency: 'EUR', rates: { per_minute: '0.600001', per_text: '0.050000' } });
      const tenant = await createTenant(owner);
      expect(await getPrices(owner, tenant.id)).to.deep.equal({ tenant_id: tenant.id, per_minute: '0.600001', per_text: '0.050000', currency: 'EUR' });

      const set = expectStatus(await owner.as.put(pricesPath(tenant.id), { per_minute: '0.2', per_text: '0.020000' }), 200).body;
      expect(set).to.deep.equal({ tenant_id: tenant.id, per_minute: '0.200000', per_text: '0.020000', currency: 'EUR' });
      expect(await getPrices(owner, tenant.id)).to.deep.equal(set);

      // Each tenant has its own; the bounds of a rate are accepted.
      const other = await createTenant(owner);
      expect((await getPrices(owner, other.id)).per_minute).to.equal('0.600001');
      const bounds = expectStatus(await owner.as.put(pricesPath(other.id), { per_minute: '1000', per_text: '0' }), 200).body;
      expect(bounds).to.include({ per_minute: '1000.000000', per_text: '0.000000' });
      expect((await getPrices(owner, tenant.id)).per_minute).to.equal('0.200000');
    });

    it('answers 400 for a bad money string, a negative price, one above 1,000, a missing or unknown field; nothing changes', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      expectStatus(await owner.as.put(pricesPath(tenant.id), { per_minute: '0.200000', per_text: '0.020000' }), 200);
      const valid = { per_minute: '0.300000', per_text: '0.030000' };
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ ...valid, per_minute: '0.0000001' }, 'per_minute'],
        [{ ...valid, per_minute: 'abc' }, 'per_minute'],
        [{ ...valid, per_minute: '1e3' }, 'per_minute'],
        [{ ...valid, per_minute: '' }, 'per_minute'],
        [{ ...valid, per_minute: ' 0.2' }, 'per_minute'],
        [{ ...valid, per_minute: '0,2' }, 'per_minute'],
        [{ ...valid, per_minute: 0.2 }, 'per_minute'],
        [{ ...valid, per_minute: null }, 'per_minute'],
        [{ ...valid, per_minute: '-0.000001' }, 'per_minute'],
        [{ ...valid, per_text: '-1' }, 'per_text'],
        [{ ...valid, per_minute: '1000.000001' }, 'per_minute'],
        [{ ...valid, per_text: '1000000000000' }, 'per_text'],
        [{ per_minute: valid.per_minute }, 'per_text'],
        [{ per_text: valid.per_text }, 'per_minute'],
        [{ ...valid, currency: 'USD' }, 'currency'],
      ];
      for (const [body, path] of bad) {
        const res = await owner.as.put(pricesPath(tenant.id), body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expectInvalid(res, path);
      }
      expectStatus(await owner.as.put(pricesPath(tenant.id), {}), 400);
      expect(await getPrices(owner, tenant.id)).to.include({ per_minute: '0.200000', per_text: '0.020000' });
    });

    it("answers 404 tenant_not_found for another reseller's tenant, the reseller's own id or an unknown id", async () => {
      const mine = await reseller();
      const theirs = await reseller();
      const theirTenant = await createTenant(theirs);
      const body = { per_minute: '0.100000', per_text: '0.010000' };
      for (const id of [theirTenant.id, mine.id, 'ten_doesnotexist']) {
        expectError(await mine.as.get(pricesPath(id)), 404, 'tenant_not_found');
        expectError(await mine.as.put(pricesPath(id), body), 404, 'tenant_not_found');
      }
      expect((await getPrices(theirs, theirTenant.id)).per_minute).to.equal('0.600000');
    });

    it('setting needs the settings capability; reading needs none', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const operatorOnly = asCaller(await keyWith(owner, ['operate']));
      const error = expectError(await operatorOnly.put(pricesPath(tenant.id), { per_minute: '0.1', per_text: '0.01' }), 403, 'missing_capability');
      expect(error.required).to.equal('settings');
      expect(expectStatus(await operatorOnly.get(pricesPath(tenant.id)), 200).body.per_minute).to.equal('0.600000');
      const settings = asCaller(await keyWith(owner, ['settings']));
      expectStatus(await settings.put(pricesPath(tenant.id), { per_minute: '0.1', per_text: '0.01' }), 200);
    });

    it('is closed inside a tenant (403 not_available_for_tenant) and to an ordinary organization (403 not_a_reseller)', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      expectError(await inside.get(pricesPath(tenant.id)), 403, 'not_available_for_tenant');
      expectError(await inside.put(pricesPath(tenant.id), { per_minute: '0.1', per_text: '0.01' }), 403, 'not_available_for_tenant');
      const ordinary = asCaller((await createOrg()).key);
      expectError(await ordinary.get(pricesPath(tenant.id)), 403, 'not_a_reseller');
      expectError(await ordinary.put(pricesPath(tenant.id), { per_minute: '0.1', per_text: '0.01' }), 403, 'not_a_reseller');
      expect((await getPrices(owner, tenant.id)).per_minute).to.equal('0.600000');
    });
  });

  describe('billable amounts, with a running calls worker', function () {
    this.timeout(60_000);
    withCallsWorker();

    // The reseller's rates make the charge round up too: 7 s at 0.600001/min is 0.0700001166…
    const RATES = { per_minute: '0.600001', per_text: '0.050000' };

    /**
     * A reseller at RATES whose agents text confirmations (its sending number), and a tenant with
     * an agent and a contact, and `prices` set when given. `since`: a moment before any of it.
     */
    async function tenantWithContact(prices?: { per_minute: string; per_text: string }) {
      const since = new Date(Date.now() - 60_000);
      const owner = await reseller({ balance: '100.000000', rates: RATES });
      const number = expectStatus(await owner.as.post('/v1/phone-numbers', {}), 201).body.phone_number;
      expectStatus(await owner.as.put('/v1/sms-sender', { phone_number: number }), 200);
      const tenant = await createTenant(owner);
      if (prices) expectStatus(await owner.as.put(pricesPath(tenant.id), prices), 200);
      const inside = owner.inside(tenant.id);
      const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
      const contact = expectStatus(await inside.post('/v1/contacts', { name: 'Cleo', phone_number: uniquePhone() }), 201).body;
      /** Places a call inside the tenant; returns its record as placed. */
      const place = async (simulate: Record<string, unknown>) => {
        const placed = expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate }), 201).body;
        expect(placed).to.include({ charge: null, billable: null });
        return placed;
      };
      const ended = async (id: string) => (await waitForCalls(owner, [id], 20_000, { 'X-Tenant-Id': tenant.id }))[0];
      /** Places a call inside the tenant and waits for its end; returns its record. */
      const call = async (simulate: Record<string, unknown>) => ended((await place(simulate)).id);
      return { since, owner, tenant, inside, place, ended, call };
    }

    const PRICES = { per_minute: '0.200000', per_text: '0.020000' };

    /** The tenant's usage from `since` to an hour from now. */
    const usageSince = async (owner: Reseller, tenantId: string, since: Date) => {
      const query = `since=${since.toISOString()}&until=${new Date(Date.now() + 3_600_000).toISOString()}`;
      return expectStatus(await owner.as.get(`/v1/tenants/${tenantId}/usage?${query}`), 200).body;
    };

    const micros = (amount: string) => parseMoney(amount)!;
    const sum = (amounts: string[]) => formatMoney(amounts.reduce((total, a) => total + micros(a), 0n));

    it("bills a tenant's call per started second at the resale price, charges the reseller at its rate; texts at per_text", async () => {
      const { since, owner, tenant, inside, call } = await tenantWithContact(PRICES);
      const short = await call({ duration_seconds: 7, outcome: 'positive' });
      expect(short).to.include({ status: 'completed', duration_seconds: 7, charge: '0.070001', billable: '0.023334', currency: 'USD' });
      const long = await call({ duration_seconds: 61, outcome: 'neutral' });
      expect(long).to.include({ charge: formatMoney(chargeForSeconds(61, 600_001n)), billable: '0.203334' });
      const unanswered = await call({ answer: false });
      expect(unanswered).to.include({ status: 'no_answer', charge: '0.000000', billable: '0.000000' });

      // The positive call's confirmation: charged to the reseller at 0.05, billed to the tenant at 0.02.
      const texts = expectStatus(await inside.get('/v1/messages'), 200).body.data;
      expect(texts.map((t: { call_id: string; charge: string }) => [t.call_id, t.charge])).to.deep.equal([[short.id, '0.050000']]);

      const usage = await usageSince(owner, tenant.id, since);
      const calls = [short, long, unanswered];
      expect(usage.charges).to.deep.equal({
        calls: sum(calls.map((c) => c.charge)),
        other: '0.050000',
        total: sum([...calls.map((c) => c.charge), '0.050000']),
      });
      expect(usage.billable).to.deep.equal({
        calls: sum(calls.map((c) => c.billable)),
        other: '0.020000',
        total: sum([...calls.map((c) => c.billable), '0.020000']),
      });
      expect(usage.billable).to.deep.equal({ calls: '0.226668', other: '0.020000', total: '0.246668' });
      expect(expectStatus(await owner.as.get('/v1/balance'), 200).body.balance).to.equal(formatMoney(100_000_000n - micros(usage.charges.total)));
    });

    it('without prices set, bills at the reseller’s rate: billable equals charge', async () => {
      const { since, owner, tenant, call } = await tenantWithContact();
      const done = await call({ duration_seconds: 7, outcome: 'positive' });
      expect(done).to.include({ charge: '0.070001', billable: '0.070001' });
      const usage = await usageSince(owner, tenant.id, since);
      expect(usage.billable).to.deep.equal(usage.charges);
      expect(usage.billable).to.deep.equal({ calls: '0.070001', other: '0.050000', total: '0.120001' });
    });

    it('each call keeps the prices in force when it ended: a change while a call is in progress applies to it, not to calls ended before', async () => {
      const { since, owner, tenant, inside, place, ended, call } = await tenantWithContact(PRICES);
      const first = await call({ duration_seconds: 7, outcome: 'positive' });
      expect(first.billable).to.equal('0.023334');

      // A call that lasts a while (1,000 call-seconds of SIM_SECOND_MS): the prices change while it talks.
      const placed = await place({ duration_seconds: 1000, outcome: 'positive' });
      for (let i = 0; ; i++) {
        const [row] = await db.query('SELECT status FROM calls WHERE id = $1', [placed.id]);
        if (row.status === 'in_progress') break;
        if (row.status === 'completed' || i > 400) throw new Error(`the call was never seen in progress (${row.status})`);
        await new Promise((r) => setTimeout(r, 10));
      }
      expectStatus(await owner.as.put(pricesPath(tenant.id), { per_minute: '0.300000', per_text: '0.030000' }), 200);
      const second = await ended(placed.id);
      expect(second).to.include({ status: 'completed', duration_seconds: 1000, billable: '5.000000', charge: formatMoney(chargeForSeconds(1000, 600_001n)) });
      expect(expectStatus(await inside.get(`/v1/calls/${first.id}`), 200).body.billable).to.equal('0.023334');

      const usage = await usageSince(owner, tenant.id, since);
      expect(usage.billable).to.deep.equal({ calls: '5.023334', other: '0.050000', total: '5.073334' });
      expect(usage.charges.other).to.equal('0.100000');
    });

    it("shows billable null on a call of an organization that is no tenant (the reseller's own)", async () => {
      const owner = await reseller({ balance: '100.000000', rates: RATES });
      const agent = expectStatus(await owner.as.post('/v1/agents', { name: 'Ava' }), 201).body;
      const contact = expectStatus(await owner.as.post('/v1/contacts', { name: 'Eve', phone_number: uniquePhone() }), 201).body;
      const placed = expectStatus(
        await owner.as.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate: { duration_seconds: 7 } }),
        201,
      ).body;
      const [done] = await waitForCalls(owner, [placed.id]);
      expect(done).to.include({ status: 'completed', charge: '0.070001', billable: null });
      expect(done).to.have.property('billable', null);
    });
  });
});
