import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { config } from '../../src/config.js';
import { db } from '../helpers/db.js';
import { newId } from '../../src/lib/ids.js';
import {
  addMember,
  app,
  bearer,
  createOrg,
  expectError,
  expectStatus,
  listApiKeys,
  twoApiProcesses,
  postApiKey,
  signIn,
  uniqueEmail,
  type TestOrg,
} from '../helpers/api.js';

/** `GET /v1/balance` with the given headers (on `target`, else the shared app). */
async function getBalance(headers: Record<string, string>, target?: Express) {
  return request(target ?? (await app()))
    .get('/v1/balance')
    .set(headers);
}

/** A key of `org` holding exactly `permissions`, created through the API. */
async function keyWith(ownerKey: string, permissions: string[], target?: Express): Promise<{ key: string; keyId: string }> {
  const res = expectStatus(await postApiKey(ownerKey, { label: `perms ${permissions.join(',')}`, permissions }, target), 201);
  expect(res.body.permissions).to.have.members(permissions);
  return { key: res.body.key, keyId: res.body.key_id };
}

/** A session token of a new member of `orgId` holding `capabilities`. */
async function sessionToken(orgId: string, capabilities: string[]): Promise<string> {
  const email = uniqueEmail('session');
  const password = 'correct horse battery';
  await addMember(orgId, { email, capabilities, password });
  const res = expectStatus(await signIn({ email, password }), 201);
  return res.body.token;
}

/** A tenant of `resellerId`, written directly: an organization whose parent is the reseller. */
async function insertTenant(resellerId: string): Promise<string> {
  const id = newId('ten');
  await db.query(`INSERT INTO organizations (id, name, parent_id) VALUES ($1, 'Tenant', $2)`, [id, resellerId]);
  return id;
}

const randomSuffix = () => newId('x').slice(2).repeat(2);

describe('authentication (SPEC.md §5, CONTRACT.md §2)', () => {
  // Each test has its own organization: key creations are limited to 5 per hour per organization.
  let org: TestOrg;

  beforeEach(async () => {
    org = await createOrg({ balance: '12.34' });
  });

  describe('401 unauthorized', () => {
    const cases: [string, () => Record<string, string>][] = [
      ['no Authorization header', () => ({})],
      ['an empty Authorization header', () => ({ Authorization: '' })],
      ['"Bearer" without a token', () => ({ Authorization: 'Bearer' })],
      ['"Bearer " followed by spaces only', () => ({ Authorization: 'Bearer    ' })],
      ['a valid key without the Bearer scheme', () => ({ Authorization: org.key })],
      ['a valid key under the Basic scheme', () => ({ Authorization: `Basic ${Buffer.from(`${org.key}:`).toString('base64')}` })],
      ['a valid key under a Token scheme', () => ({ Authorization: `Token ${org.key}` })],
      ['a valid key with extra characters appended', () => ({ Authorization: bearer(`${org.key}x`) })],
      ['a valid key cut short', () => ({ Authorization: bearer(org.key.slice(0, -1)) })],
      ['an unknown rk_live_ key', () => ({ Authorization: bearer(`rk_live_${randomSuffix()}`) })],
      ['an unknown session token', () => ({ Authorization: bearer(`rs_sess_${randomSuffix()}`) })],
      ['a token of neither form', () => ({ Authorization: bearer(randomSuffix()) })],
      ['the operator token', () => ({ Authorization: bearer(config.operatorToken!) })],
    ];
    for (const [name, headers] of cases) {
      it(`with ${name}`, async () => {
        expectError(await getBalance(headers()), 401, 'unauthorized');
      });
    }

    it('also on writes, before any validation', async () => {
      const res = await request(await app())
        .post('/v1/api-keys')
        .send({ nonsense: true });
      expectError(res, 401, 'unauthorized');
    });

    it('accepts the same key with a valid Bearer header (control)', async () => {
      expectStatus(await getBalance({ Authorization: bearer(org.key) }), 200);
      expectStatus(await getBalance({ Authorization: `bearer ${org.key}` }), 200);
    });
  });

  describe('revocation takes effect on the very next request, in every API process', () => {
    const processes = twoApiProcesses();

    for (const direction of ['A', 'B'] as const) {
      it(`revoked through instance ${direction}: both instances answer 401 at once`, async () => {
        const { a, b } = processes;
        const [revoker, other] = direction === 'A' ? [a, b] : [b, a];
        const owner = await createOrg();
        const victim = await keyWith(owner.key, ['operate'], revoker.app);

        // Warm both in-process credential caches with the key.
        for (const instance of [a, b]) expectStatus(await getBalance({ Authorization: bearer(victim.key) }, instance.app), 200);

        await request(revoker.app).delete(`/v1/api-keys/${victim.keyId}`).set('Authorization', bearer(owner.key)).expect(204);

        expectError(await getBalance({ Authorization: bearer(victim.key) }, other.app), 401, 'unauthorized');
        expectError(await getBalance({ Authorization: bearer(victim.key) }, revoker.app), 401, 'unauthorized');
        // Other keys of the organization are untouched.
        for (const instance of [a, b]) expectStatus(await getBalance({ Authorization: bearer(owner.key) }, instance.app), 200);
      });
    }
  });

  describe('capabilities gate writes; reads need none', () => {
    it('a key with permissions [] can read the key list and the balance', async () => {
      const { key } = await keyWith(org.key, []);
      const list = expectStatus(await listApiKeys(key), 200);
      expect(list.body.data).to.be.an('array').that.is.not.empty;
      expectStatus(await getBalance({ Authorization: bearer(key) }), 200);
    });

    it('a key without api_keys cannot create a key: 403 missing_capability, required api_keys', async () => {
      for (const permissions of [[], ['operate', 'settings', 'webhooks']]) {
        const { key } = await keyWith(org.key, permissions);
        const error = expectError(await postApiKey(key, { label: 'nope', permissions: [] }), 403, 'missing_capability');
        expect(error.required).to.equal('api_keys');
      }
    });

    it('a key without api_keys cannot revoke a key, and the key stays valid', async () => {
      const { key } = await keyWith(org.key, ['operate']);
      const target = await keyWith(org.key, []);
      const res = await request(await app())
        .delete(`/v1/api-keys/${target.keyId}`)
        .set('Authorization', bearer(key));
      expect(expectError(res, 403, 'missing_capability').required).to.equal('api_keys');
      expectStatus(await getBalance({ Authorization: bearer(target.key) }), 200);
    });
  });

  describe('X-Tenant-Id', () => {
    let reseller: TestOrg;
    let tenantId: string;

    before(async () => {
      reseller = await createOrg({ reseller: true });
      tenantId = await insertTenant(reseller.id);
    });

    it('with a session token is 403 tenant_header_requires_api_key, even for one of its tenants', async () => {
      const token = await sessionToken(reseller.id, ['operate', 'api_keys']);
      expectStatus(await getBalance({ Authorization: bearer(token) }), 200);
      for (const id of [tenantId, 'ten_unknown']) {
        expectError(await getBalance({ Authorization: bearer(token), 'X-Tenant-Id': id }), 403, 'tenant_header_requires_api_key');
      }
    });

    it('with an API key and an id that is not one of its tenants is 404 tenant_not_found', async () => {
      const ordinary = await createOrg();
      const otherReseller = await createOrg({ reseller: true });
      const foreignTenant = await insertTenant(otherReseller.id);
      const nobodys = ['ten_doesnotexist', '', ordinary.id, otherReseller.id, foreignTenant];
      const attempts: [TestOrg, string[]][] = [
        [reseller, [...nobodys, reseller.id]],
        [org, [...nobodys, org.id, tenantId]], // an ordinary organization has no tenants at all
      ];
      for (const [caller, ids] of attempts) {
        for (const id of ids) {
          const res = await getBalance({ Authorization: bearer(caller.key), 'X-Tenant-Id': id });
          expectError(res, 404, 'tenant_not_found');
        }
      }
    });

    it('with an API key and one of its own tenants is accepted (the balance area is then closed)', async () => {
      const res = await getBalance({ Authorization: bearer(reseller.key), 'X-Tenant-Id': tenantId });
      expectError(res, 403, 'not_available_for_tenant');
    });
  });

  describe('GET /v1/balance', () => {
    it('answers {balance, currency} with a 6-decimal string', async () => {
      const res = expectStatus(await getBalance({ Authorization: bearer(org.key) }), 200);
      expect(res.body).to.deep.equal({ balance: '12.340000', currency: 'USD' });
    });

    it('is "0.000000" in the organization currency for a new organization', async () => {
      const euro = await createOrg({ currency: 'EUR' });
      const res = expectStatus(await getBalance({ Authorization: bearer(euro.key) }), 200);
      expect(res.body).to.deep.equal({ balance: '0.000000', currency: 'EUR' });
    });
  });
});
