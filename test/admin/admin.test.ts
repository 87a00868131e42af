import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import type { RinglaneApp } from '../../src/app.js';
import { db } from '../helpers/db.js';
import { app, bearer, createOrg, expectError, expectStatus, listApiKeys, newApp, operator, uniqueEmail, type TestOrg } from '../helpers/api.js';

const ALL = ['operate', 'settings', 'api_keys', 'webhooks'];

type Method = 'get' | 'post' | 'patch';

/** An admin API request with the operator token (or `authorization`, when given). */
async function admin(method: Method, path: string, body?: unknown, authorization: string | null = operator(), target?: Express) {
  let req = request(target ?? (await app()))[method](`/admin/v1${path}`);
  if (authorization !== null) req = req.set('Authorization', authorization);
  return body === undefined ? req : req.send(body as object);
}

/** The sum of the organization's ledger lines, formatted like a balance. */
async function ledgerSum(orgId: string): Promise<string> {
  const [{ sum }] = await db.query('SELECT COALESCE(SUM(amount_micros), 0)::bigint AS sum FROM ledger_entries WHERE org_id = $1', [orgId]);
  const micros = BigInt(sum);
  const abs = micros < 0n ? -micros : micros;
  return `${micros < 0n ? '-' : ''}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/** Expects `promise` to reject with an error whose message matches `pattern`. */
async function expectRejection(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  let failure: unknown = null;
  try {
    await promise;
  } catch (err) {
    failure = err;
  }
  expect(failure, 'the statement was refused').to.be.instanceOf(Error);
  expect((failure as Error).message).to.match(pattern);
}

describe('operator admin API (CONTRACT.md §3)', () => {
  describe('operator token', () => {
    let closed: RinglaneApp;
    before(async () => {
      closed = await newApp({ operatorToken: null });
    });
    after(async () => {
      await closed.close();
    });

    const attempts: [string, string | null][] = [
      ['no Authorization header', null],
      ['a wrong token', bearer('not-the-operator-token-at-all')],
      ['the token without the Bearer scheme', operator().slice('Bearer '.length)],
      ['an empty Bearer token', 'Bearer '],
    ];
    for (const [name, authorization] of attempts) {
      it(`answers 401 unauthorized with ${name}`, async () => {
        expectError(await admin('post', '/orgs', { name: 'Nope' }, authorization), 401, 'unauthorized');
      });
    }

    it('refuses an organization API key', async () => {
      const org = await createOrg();
      expectError(await admin('get', `/orgs/${org.id}`, undefined, bearer(org.key)), 401, 'unauthorized');
    });

    it('answers 401 to everyone when no operator token is configured', async () => {
      const org = await createOrg();
      for (const authorization of [operator(), null, 'Bearer ', 'Bearer null', 'Bearer undefined']) {
        expectError(await admin('post', '/orgs', { name: 'Nope' }, authorization, closed.app), 401, 'unauthorized');
        expectError(await admin('get', `/orgs/${org.id}`, undefined, authorization, closed.app), 401, 'unauthorized');
      }
    });

    it('creates nothing when refused', async () => {
      const name = `Refused ${uniqueEmail()}`;
      await admin('post', '/orgs', { name }, bearer('wrong-token-wrong-token'));
      const rows = await db.query('SELECT id FROM organizations WHERE name = $1', [name]);
      expect(rows).to.deep.equal([]);
    });
  });

  describe('POST /admin/v1/orgs', () => {
    it('answers 201 {org, member, api_key}: an owner member and a key with all four capabilities', async () => {
      const res = expectStatus(await admin('post', '/orgs', { name: 'Acme Dental' }), 201);
      const { org, member, api_key: apiKey } = res.body;
      expect(res.body).to.have.all.keys('org', 'member', 'api_key');
      expect(org.name).to.equal('Acme Dental');
      expect(org.id).to.be.a('string').that.is.not.empty;
      expect(member.capabilities).to.have.members(ALL);
      expect(member.org_id).to.equal(org.id);
      expect(apiKey.permissions).to.have.members(ALL);
      expect(apiKey.key).to.match(/^rk_live_[0-9A-Za-z]{32,}$/);
      expect(apiKey.prefix).to.equal(apiKey.key.slice(0, 12));
      // The key works and belongs to the new organization.
      const list = expectStatus(await listApiKeys(apiKey.key), 200).body;
      expect(list.data.map((k: any) => k.key_id)).to.deep.equal([apiKey.key_id]);
    });

    it('formats money as 6-decimal strings and reflects every setting', async () => {
      const body = {
        name: 'Reseller Co',
        reseller: true,
        tenant_limit: 3,
        ceiling: { max_concurrent_calls: 4, max_calls_per_hour: 120 },
        rates: { per_minute: '0.12', per_text: '0.0075' },
        balance: '10.5',
        currency: 'EUR',
      };
      const { org, api_key: apiKey } = expectStatus(await admin('post', '/orgs', body), 201).body;
      expect(org).to.include({ name: 'Reseller Co', reseller: true, tenant_limit: 3, balance: '10.500000', currency: 'EUR' });
      expect(org.ceiling).to.deep.equal({ max_concurrent_calls: 4, max_calls_per_hour: 120 });
      expect(org.rates).to.deep.equal({ per_minute: '0.120000', per_text: '0.007500' });
      const balance = expectStatus(
        await request(await app())
          .get('/v1/balance')
          .set('Authorization', bearer(apiKey.key)),
        200,
      );
      expect(balance.body).to.deep.equal({ balance: '10.500000', currency: 'EUR' });
      expect(await ledgerSum(org.id)).to.equal('10.500000');
    });

    it('defaults: not a reseller, zero balance in USD', async () => {
      const { org } = expectStatus(await admin('post', '/orgs', { name: 'Plain' }), 201).body;
      expect(org).to.include({ reseller: false, balance: '0.000000', currency: 'USD' });
      expect(org.rates).to.deep.equal({ per_minute: '0.000000', per_text: '0.000000' });
    });

    const invalid: [string, Record<string, unknown>, string][] = [
      ['a missing name', {}, 'name'],
      ['a balance as a number', { name: 'x', balance: 10.5 }, 'balance'],
      ['a balance with 7 decimals', { name: 'x', balance: '1.1234567' }, 'balance'],
      ['a negative rate', { name: 'x', rates: { per_minute: '-1', per_text: '0' } }, 'rates.per_minute'],
      // Money is bounded so that no charge or balance can overflow bigint.
      ['a per-minute rate of 999999999999', { name: 'x', rates: { per_minute: '999999999999' } }, 'rates.per_minute'],
      ['a per-text rate above 1000', { name: 'x', rates: { per_text: '1000.000001' } }, 'rates.per_text'],
      ['an opening balance above 1,000,000,000', { name: 'x', balance: '1000000000.000001' }, 'balance'],
      ['a non-boolean reseller flag', { name: 'x', reseller: 'yes' }, 'reseller'],
      ['a negative tenant limit', { name: 'x', tenant_limit: -1 }, 'tenant_limit'],
      ['a bad currency', { name: 'x', currency: 'euro' }, 'currency'],
      ['an unknown field', { name: 'x', plan: 'gold' }, 'plan'],
    ];
    for (const [name, body, path] of invalid) {
      it(`is 400 invalid_request for ${name}, naming "${path}"`, async () => {
        const error = expectError(await admin('post', '/orgs', body), 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
      });
    }
  });

  describe('PATCH /admin/v1/orgs/{id}', () => {
    it('changes reseller, tenant_limit, ceiling and rates, and GET shows the change', async () => {
      const org = await createOrg();
      const changes = {
        reseller: true,
        tenant_limit: 25,
        ceiling: { max_concurrent_calls: 7, max_calls_per_hour: 70 },
        rates: { per_minute: '0.3', per_text: '0.02' },
      };
      const patched = expectStatus(await admin('patch', `/orgs/${org.id}`, changes), 200).body;
      const expected = {
        reseller: true,
        tenant_limit: 25,
        ceiling: { max_concurrent_calls: 7, max_calls_per_hour: 70 },
        rates: { per_minute: '0.300000', per_text: '0.020000' },
      };
      expect(patched).to.deep.include({ id: org.id, ...expected });
      const read = expectStatus(await admin('get', `/orgs/${org.id}`), 200).body;
      expect(read).to.deep.include(expected);
    });

    it('changes only what it is given', async () => {
      const org = await createOrg({ reseller: true, tenant_limit: 5, rates: { per_minute: '1', per_text: '2' } });
      const patched = expectStatus(await admin('patch', `/orgs/${org.id}`, { tenant_limit: 6 }), 200).body;
      expect(patched).to.deep.include({ reseller: true, tenant_limit: 6, rates: { per_minute: '1.000000', per_text: '2.000000' } });
    });

    it('can turn reseller off again', async () => {
      const org = await createOrg({ reseller: true });
      const patched = expectStatus(await admin('patch', `/orgs/${org.id}`, { reseller: false }), 200).body;
      expect(patched.reseller).to.equal(false);
    });

    it('is 400 for an empty body or an unknown field, 404 organization_not_found for an unknown org', async () => {
      const org = await createOrg();
      expectError(await admin('patch', `/orgs/${org.id}`, {}), 400, 'invalid_request');
      const error = expectError(await admin('patch', `/orgs/${org.id}`, { name: 'renamed' }), 400, 'invalid_request');
      expect(error.details.map((d: { path: string }) => d.path)).to.include('name');
      expectError(await admin('patch', '/orgs/org_doesnotexist', { tenant_limit: 1 }), 404, 'organization_not_found');
    });
  });

  describe('POST /admin/v1/orgs/{id}/balance', () => {
    let org: TestOrg;
    beforeEach(async () => {
      org = await createOrg({ balance: '10' });
    });

    it('answers {balance, currency}; the balance is the sum of the ledger', async () => {
      const res = expectStatus(await admin('post', `/orgs/${org.id}/balance`, { amount: '-2.25' }), 200);
      expect(res.body).to.deep.equal({ balance: '7.750000', currency: 'USD' });
      expect(await ledgerSum(org.id)).to.equal('7.750000');
      const credit = expectStatus(await admin('post', `/orgs/${org.id}/balance`, { amount: '0.000001' }), 200);
      expect(credit.body.balance).to.equal('7.750001');
      expect(await ledgerSum(org.id)).to.equal('7.750001');
    });

    const invalid: [string, unknown][] = [
      ['"1.1234567"', '1.1234567'],
      ['"abc"', 'abc'],
      ['5 as a number', 5],
      ['an empty string', ''],
      ['"1e3"', '1e3'],
    ];
    for (const [name, amount] of invalid) {
      it(`is 400 invalid_request for an amount of ${name}, and changes nothing`, async () => {
        const error = expectError(await admin('post', `/orgs/${org.id}/balance`, { amount }), 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include('amount');
        expect(await ledgerSum(org.id)).to.equal('10.000000');
      });
    }

    it('is 400 without an amount', async () => {
      expectError(await admin('post', `/orgs/${org.id}/balance`, {}), 400, 'invalid_request');
    });

    it('is 400 naming "amount" for a credit or debit beyond ±1,000,000,000, or one that would take the balance beyond ±10^12', async () => {
      for (const amount of ['1000000000.000001', '-1000000000.000001', '999999999999.999999']) {
        const error = expectError(await admin('post', `/orgs/${org.id}/balance`, { amount }), 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include('amount');
      }
      // 999 credits of the largest amount reach 999,000,000,010; the 1,000th would pass 10^12.
      await db.query(
        `INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, description)
         SELECT 'led_big' || n || $1, $1, $1, 'adjustment', 1000000000000000, 'test' FROM generate_series(1, 999) AS n`,
        [org.id],
      );
      expectStatus(await admin('post', `/orgs/${org.id}/balance`, { amount: '990' }), 200);
      const error = expectError(await admin('post', `/orgs/${org.id}/balance`, { amount: '1000000000' }), 400, 'invalid_request');
      expect(error.details.map((d: { path: string }) => d.path)).to.deep.equal(['amount']);
      expect(await ledgerSum(org.id)).to.equal('999000001000.000000');
    });

    it('is 404 organization_not_found for an unknown organization', async () => {
      expectError(await admin('post', '/orgs/org_doesnotexist/balance', { amount: '1' }), 404, 'organization_not_found');
    });
  });

  describe('POST /admin/v1/orgs/{id}/members', () => {
    it('answers 201 {member, api_key} with the given capabilities', async () => {
      const org = await createOrg();
      const email = uniqueEmail('member');
      const res = expectStatus(await admin('post', `/orgs/${org.id}/members`, { email, capabilities: ['webhooks', 'operate'] }), 201);
      expect(res.body).to.have.all.keys('member', 'api_key');
      expect(res.body.member).to.include({ email, org_id: org.id });
      expect(res.body.member.capabilities).to.have.members(['operate', 'webhooks']);
      expect(res.body.api_key.permissions).to.have.members(['operate', 'webhooks']);
      expect(res.body.member).to.not.have.property('password');
      expect(res.body.member).to.not.have.property('password_hash');
      // The member's key belongs to the organization.
      const list = expectStatus(await listApiKeys(res.body.api_key.key), 200).body;
      expect(list.data.map((k: any) => k.key_id)).to.include.members([org.keyId, res.body.api_key.key_id]);
    });

    it('is 409 member_exists for an email already in use, whatever its case', async () => {
      const org = await createOrg();
      const other = await createOrg();
      const email = uniqueEmail('dup');
      expectStatus(await admin('post', `/orgs/${org.id}/members`, { email, capabilities: [] }), 201);
      for (const [target, variant] of [
        [org, email],
        [other, email.toUpperCase()],
      ] as const) {
        expectError(await admin('post', `/orgs/${target.id}/members`, { email: variant, capabilities: ['operate'] }), 409, 'member_exists');
      }
    });

    it('is 400 for an unknown capability, a bad email or a short password', async () => {
      const org = await createOrg();
      const cases: [Record<string, unknown>, string][] = [
        [{ email: uniqueEmail(), capabilities: ['root'] }, 'capabilities.0'],
        [{ email: 'not-an-email', capabilities: [] }, 'email'],
        [{ email: uniqueEmail(), capabilities: [], password: 'short' }, 'password'],
      ];
      for (const [body, path] of cases) {
        const error = expectError(await admin('post', `/orgs/${org.id}/members`, body), 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
      }
    });

    it('is 404 organization_not_found for an unknown organization', async () => {
      const res = await admin('post', '/orgs/org_doesnotexist/members', { email: uniqueEmail(), capabilities: [] });
      expectError(res, 404, 'organization_not_found');
    });
  });

  describe('a tenant has no login, no balance and no operator settings (SPEC.md §1, issue 9)', () => {
    let reseller: TestOrg;
    let tenantId: string;
    beforeEach(async () => {
      reseller = await createOrg({ reseller: true, balance: '10' });
      const res = await request(await app())
        .post('/v1/tenants')
        .set('Authorization', bearer(reseller.key))
        .send({ name: 'Tenant', timezone: 'UTC', industry: 'dental' });
      tenantId = expectStatus(res, 201).body.id;
    });

    const memberCount = async (orgId: string) => Number((await db.query('SELECT count(*)::int AS n FROM members WHERE org_id = $1', [orgId]))[0].n);

    it('refuses members, keys, balance changes and every setting for a tenant with 409 org_is_tenant, changing nothing', async () => {
      const before = expectStatus(await admin('get', `/orgs/${tenantId}`), 200).body;
      for (const body of [{ reseller: true }, { tenant_limit: 5 }, { ceiling: { max_concurrent_calls: 99 } }, { rates: { per_minute: '1' } }]) {
        expectError(await admin('patch', `/orgs/${tenantId}`, body), 409, 'org_is_tenant');
      }
      expectError(
        await admin('post', `/orgs/${tenantId}/members`, { email: uniqueEmail('tenant'), capabilities: ALL, password: 'a long password' }),
        409,
        'org_is_tenant',
      );
      expectError(await admin('post', `/orgs/${tenantId}/balance`, { amount: '5' }), 409, 'org_is_tenant');
      expect(expectStatus(await admin('get', `/orgs/${tenantId}`), 200).body).to.deep.equal(before);
      expect(await memberCount(tenantId)).to.equal(0);
      expect((await db.query('SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1', [tenantId]))[0].n).to.equal(0);
    });

    it('a reseller whose reseller access is removed gets 403 not_a_reseller inside its tenants too, on reads and writes', async () => {
      const call = async (method: 'get' | 'post', path: string, body?: object) => {
        const req = request(await app())
          [method](path)
          .set('Authorization', bearer(reseller.key))
          .set('X-Tenant-Id', tenantId);
        return body ? req.send(body) : req;
      };
      expectStatus(await call('get', '/v1/contacts'), 200);
      expectStatus(await admin('patch', `/orgs/${reseller.id}`, { reseller: false }), 200);
      expectError(await call('get', '/v1/contacts'), 403, 'not_a_reseller');
      expectError(await call('post', '/v1/contacts', { name: 'X', phone_number: '+14155550100' }), 403, 'not_a_reseller');
      expectError(await call('get', '/v1/tenants'), 403, 'not_a_reseller');
      // Its own organization still works.
      expectStatus(
        await request(await app())
          .get('/v1/contacts')
          .set('Authorization', bearer(reseller.key)),
        200,
      );
    });
  });

  describe('the ledger', () => {
    it('is append-only: UPDATE and DELETE on ledger_entries are refused by the database', async () => {
      const org = await createOrg({ balance: '3' });
      await expectRejection(db.query(`UPDATE ledger_entries SET amount_micros = 1 WHERE org_id = $1`, [org.id]), /append-only/);
      await expectRejection(db.query(`DELETE FROM ledger_entries WHERE org_id = $1`, [org.id]), /append-only/);
      expect(await ledgerSum(org.id)).to.equal('3.000000');
      const read = expectStatus(await admin('get', `/orgs/${org.id}`), 200).body;
      expect(read.balance).to.equal('3.000000');
    });
  });
});
