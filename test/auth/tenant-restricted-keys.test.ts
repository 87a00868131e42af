import { expect } from 'chai';
import request from 'supertest';
import type { RinglaneApp } from '../../src/app.js';
import { CredentialStore } from '../../src/auth/credential-store.js';
import {
  addMember,
  appOver,
  asCaller,
  bearer,
  createOrg,
  expectError,
  expectStatus,
  listApiKeys,
  operatorPatchOrg,
  postApiKey,
  twoApiProcesses,
  uniqueEmail,
  type Caller,
} from '../helpers/api.js';
import { db } from '../helpers/db.js';
import { StatementLog } from '../helpers/statements.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { uniquePhone } from '../helpers/voice.js';

const WITHOUT_API_KEYS = ['operate', 'settings', 'webhooks'];
const UNKNOWN_TENANT = `ten_${'0'.repeat(22)}`;

/** POST /v1/api-keys restricted to `tenantIds`; expects 201 and returns the body. */
async function restrictedKey(owner: { key: string }, tenantIds: string[], permissions: string[] = WITHOUT_API_KEYS) {
  return expectStatus(await postApiKey(owner.key, { label: 'tenant key', permissions, tenant_ids: tenantIds }), 201).body;
}

/** The error every request of a restricted key outside its tenants gets: the same, whatever was named. */
function expectNotAllowed(res: request.Response): void {
  expectError(res, 403, 'tenant_not_allowed_for_key');
  expect(Object.keys(res.body.error).sort()).to.deep.equal(['code', 'message']);
}

/** The operator gives or takes reseller access. */
const setReseller = (orgId: string, isReseller: boolean) => operatorPatchOrg(orgId, { reseller: isReseller });

describe('tenant-restricted API keys (CONTRACT.md §5)', () => {
  describe('POST /v1/api-keys with tenant_ids', () => {
    // Each test has its own reseller: creations are limited to 5 per hour per organization.
    let owner: Reseller;
    let tenants: string[];
    beforeEach(async () => {
      owner = await reseller();
      tenants = [(await createTenant(owner, { name: 'First' })).id, (await createTenant(owner, { name: 'Second' })).id];
    });

    it('answers 201 with the key record showing tenant_ids as given; the key never holds api_keys, even asked for', async () => {
      const created = expectStatus(
        await postApiKey(owner.key, { label: 'front desk', permissions: ['operate', 'api_keys', 'webhooks'], tenant_ids: tenants }),
        201,
      ).body;
      expect(created).to.have.all.keys('key_id', 'label', 'permissions', 'tenant_ids', 'prefix', 'created_at', 'last_used_at', 'key');
      expect(created.tenant_ids).to.deep.equal(tenants);
      expect(created.permissions).to.deep.equal(['operate', 'webhooks']);
      const listed = expectStatus(await listApiKeys(owner.key, 'limit=100'), 200).body.data.find((k: any) => k.key_id === created.key_id);
      const { key: _raw, ...record } = created;
      expect(listed).to.deep.equal(record);
    });

    it('all four asked for by the owner key: all but api_keys', async () => {
      const created = await restrictedKey(owner, [tenants[1]], ['operate', 'settings', 'api_keys', 'webhooks']);
      expect(created.permissions).to.deep.equal(['operate', 'settings', 'webhooks']);
      expect(created.tenant_ids).to.deep.equal([tenants[1]]);
    });

    it('still grants only what the creating member and calling key hold', async () => {
      const member = await addMember(owner.id, { email: uniqueEmail('restricted'), capabilities: ['operate', 'api_keys'] });
      const created = await restrictedKey({ key: member.key }, tenants, ['operate', 'settings', 'api_keys', 'webhooks']);
      expect(created.permissions).to.deep.equal(['operate']);
    });

    it('a key without tenant_ids, or with tenant_ids null, shows tenant_ids null and is unrestricted', async () => {
      const plain = expectStatus(await postApiKey(owner.key, { label: 'plain', permissions: ['api_keys'] }), 201).body;
      const explicit = expectStatus(await postApiKey(owner.key, { label: 'null', permissions: ['api_keys'], tenant_ids: null }), 201).body;
      for (const created of [plain, explicit]) {
        expect(created.tenant_ids).to.equal(null);
        expect(created.permissions).to.deep.equal(['api_keys']);
        expectStatus(await asCaller(created.key).get('/v1/organization'), 200);
        expectStatus(await asCaller(created.key, { 'X-Tenant-Id': tenants[0] }).get('/v1/organization'), 200);
      }
      const list = expectStatus(await listApiKeys(owner.key, 'limit=100'), 200).body.data;
      for (const k of list) expect(k).to.have.property('tenant_ids', null);
    });

    describe('400 invalid_request', () => {
      const cases: Array<[string, (tenants: string[]) => unknown, string]> = [
        ['an empty list', () => [], 'tenant_ids'],
        ['the same tenant twice', (t) => [t[0], t[1], t[0]], 'tenant_ids.2'],
        ['101 ids', (t) => [...t, ...Array.from({ length: 99 }, (_, i) => `ten_${i}`)], 'tenant_ids'],
        ['an id that is not a string', (t) => [t[0], 7], 'tenant_ids.1'],
        ['a null id', () => [null], 'tenant_ids.0'],
        ['an empty id', () => [''], 'tenant_ids.0'],
        ['an id of 41 characters', () => [`ten_${'x'.repeat(37)}`], 'tenant_ids.0'],
        ['an array where an id is expected', (t) => [[t[0]]], 'tenant_ids.0'],
        ['an object', (t) => ({ id: t[0] }), 'tenant_ids'],
        ['a string instead of a list', (t) => t[0], 'tenant_ids'],
        ['a number', () => 1, 'tenant_ids'],
        ['true', () => true, 'tenant_ids'],
      ];
      for (const [name, value, path] of cases) {
        it(`for ${name}, naming "${path}"`, async () => {
          const error = expectError(await postApiKey(owner.key, { label: 'x', permissions: ['operate'], tenant_ids: value(tenants) }), 400, 'invalid_request');
          expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
        });
      }

      it('naming each id that is not one of the reseller’s tenants, the same for one that exists elsewhere as for one that never existed', async () => {
        const other = await reseller();
        const theirTenant = (await createTenant(other)).id;
        const ordinary = await createOrg();
        const answers: string[] = [];
        for (const stranger of [theirTenant, other.id, ordinary.id, owner.id, UNKNOWN_TENANT, 'not an id']) {
          const res = await postApiKey(owner.key, { label: 'x', permissions: ['operate'], tenant_ids: [tenants[0], stranger, tenants[1]] });
          const error = expectError(res, 400, 'invalid_request');
          expect(error.details.map((d: { path: string }) => d.path)).to.deep.equal(['tenant_ids.1']);
          answers.push(res.text.split(JSON.stringify(stranger).slice(1, -1)).join('<id>'));
        }
        expect(new Set(answers).size, answers.join('\n')).to.equal(1);
        const both = expectError(
          await postApiKey(owner.key, { label: 'x', permissions: [], tenant_ids: [theirTenant, tenants[0], UNKNOWN_TENANT] }),
          400,
          'invalid_request',
        );
        expect(both.details.map((d: { path: string }) => d.path)).to.deep.equal(['tenant_ids.0', 'tenant_ids.2']);
      });

      it('creates nothing and takes no creation slot: five creations still pass after many refusals', async () => {
        for (let i = 0; i < 6; i++) {
          expectStatus(await postApiKey(owner.key, { label: 'x', permissions: [], tenant_ids: [UNKNOWN_TENANT] }), 400);
          expectStatus(await postApiKey(owner.key, { label: 'x', permissions: [], tenant_ids: [] }), 400);
        }
        expect(expectStatus(await listApiKeys(owner.key), 200).body.data.map((k: any) => k.key_id)).to.deep.equal([owner.keyId]);
        for (let i = 0; i < 5; i++) await restrictedKey(owner, [tenants[0]]);
        expectError(await postApiKey(owner.key, { label: 'sixth', permissions: [], tenant_ids: [tenants[0]] }), 429, 'rate_limited');
      });
    });

    it('on an organization that is not a reseller: 403 not_a_reseller, whatever the ids; nothing created', async () => {
      const ordinary = await createOrg();
      for (const ids of [[tenants[0]], [UNKNOWN_TENANT], [ordinary.id]]) {
        expectError(await postApiKey(ordinary.key, { label: 'x', permissions: ['operate'], tenant_ids: ids }), 403, 'not_a_reseller');
      }
      expect(expectStatus(await listApiKeys(ordinary.key), 200).body.data).to.have.lengthOf(1);
    });

    it('on a reseller whose reseller access was taken away: 403 not_a_reseller, even naming its own tenants', async () => {
      await setReseller(owner.id, false);
      expectError(await postApiKey(owner.key, { label: 'x', permissions: ['operate'], tenant_ids: [tenants[0]] }), 403, 'not_a_reseller');
      await setReseller(owner.id, true);
      await restrictedKey(owner, [tenants[0]]);
    });

    it('inside a tenant (X-Tenant-Id): 403 not_available_for_tenant, as for every request to the API keys; nothing created', async () => {
      const res = await postApiKey(owner.key, { label: 'x', permissions: ['operate'], tenant_ids: [tenants[0]] }, undefined, { 'X-Tenant-Id': tenants[0] });
      expectError(res, 403, 'not_available_for_tenant');
      expect(expectStatus(await listApiKeys(owner.key), 200).body.data).to.have.lengthOf(1);
    });
  });

  describe('a restricted key at work', () => {
    let owner: Reseller;
    let mine: string[];
    let ownOther: string;
    let theirs: string;
    let ordinaryId: string;
    let key: { key: string; key_id: string };
    let inside: (tenantId: string) => Caller;
    /** A contact of the first tenant and of the reseller itself, made with the owner key. */
    const contacts: Record<string, string> = {};

    before(async () => {
      owner = await reseller();
      mine = [(await createTenant(owner, { name: 'Mine 1' })).id, (await createTenant(owner, { name: 'Mine 2' })).id];
      ownOther = (await createTenant(owner, { name: 'Not the key’s' })).id;
      const other = await reseller();
      theirs = (await createTenant(other, { name: 'Another reseller’s' })).id;
      ordinaryId = (await createOrg()).id;
      key = await restrictedKey(owner, mine);
      inside = (tenantId) => asCaller(key.key, { 'X-Tenant-Id': tenantId });
      contacts.tenant = expectStatus(await owner.inside(mine[0]).post('/v1/contacts', { name: 'Tenant contact', phone_number: uniquePhone() }), 201).body.id;
      contacts.reseller = expectStatus(await owner.as.post('/v1/contacts', { name: 'Reseller contact', phone_number: uniquePhone() }), 201).body.id;
    });

    it('inside each of its tenants it reads and writes like any key with its permissions', async () => {
      for (const tenantId of mine) {
        const organization = expectStatus(await inside(tenantId).get('/v1/organization'), 200).body;
        expect(organization.id).to.equal(tenantId);
        const made = expectStatus(await inside(tenantId).post('/v1/contacts', { name: 'Made by the tenant key', phone_number: uniquePhone() }), 201).body;
        expect(expectStatus(await inside(tenantId).get(`/v1/contacts/${made.id}`), 200).body).to.deep.equal(made);
        expectStatus(await inside(tenantId).patch('/v1/organization', { name: `Renamed ${tenantId}` }), 200);
        // The same contact, seen by the reseller's own key inside the tenant.
        expectStatus(await owner.inside(tenantId).get(`/v1/contacts/${made.id}`), 200);
      }
      expect(expectStatus(await inside(mine[0]).get(`/v1/contacts/${contacts.tenant}`), 200).body.id).to.equal(contacts.tenant);
    });

    it('its permissions still gate writes inside its tenants: 403 missing_capability', async () => {
      const operateOnly = await restrictedKey(owner, [mine[0]], ['operate']);
      const caller = asCaller(operateOnly.key, { 'X-Tenant-Id': mine[0] });
      expect(expectError(await caller.patch('/v1/organization', { name: 'No' }), 403, 'missing_capability').required).to.equal('settings');
      expectStatus(await caller.post('/v1/contacts', { name: 'Yes', phone_number: uniquePhone() }), 201);
    });

    it('anywhere else: 403 tenant_not_allowed_for_key, the same answer whatever it named, on reads, writes and closed areas', async () => {
      const elsewhere: Array<[string, Record<string, string>]> = [
        ['no X-Tenant-Id', {}],
        ['the reseller itself', { 'X-Tenant-Id': owner.id }],
        ['another tenant of the reseller', { 'X-Tenant-Id': ownOther }],
        ["another reseller's tenant", { 'X-Tenant-Id': theirs }],
        ['an ordinary organization', { 'X-Tenant-Id': ordinaryId }],
        ['an id that never existed', { 'X-Tenant-Id': UNKNOWN_TENANT }],
        ['its tenant in upper case', { 'X-Tenant-Id': mine[0].toUpperCase() }],
        ['its tenant with a suffix', { 'X-Tenant-Id': `${mine[0]}x` }],
        ['both its tenants at once', { 'X-Tenant-Id': `${mine[0]},${mine[1]}` }],
        ['an empty header', { 'X-Tenant-Id': '' }],
        ['garbage', { 'X-Tenant-Id': "' OR 1=1 --" }],
        ['a very long value', { 'X-Tenant-Id': 'x'.repeat(4000) }],
      ];
      const requests: Array<[string, (c: Caller) => Promise<request.Response>]> = [
        ['GET /v1/organization', (c) => c.get('/v1/organization')],
        ['GET /v1/contacts', (c) => c.get('/v1/contacts')],
        ["GET /v1/contacts/{the reseller's contact}", (c) => c.get(`/v1/contacts/${contacts.reseller}`)],
        ["GET /v1/contacts/{its own tenant's contact}", (c) => c.get(`/v1/contacts/${contacts.tenant}`)],
        ['POST /v1/contacts', (c) => c.post('/v1/contacts', { name: 'Intruder', phone_number: uniquePhone() })],
        ['PATCH /v1/organization', (c) => c.patch('/v1/organization', { name: 'Hijacked' })],
        ['GET /v1/balance', (c) => c.get('/v1/balance')],
        ['GET /v1/tenants', (c) => c.get('/v1/tenants')],
        ['GET /v1/tenants/{its tenant}', (c) => c.get(`/v1/tenants/${mine[0]}`)],
        ['GET /v1/no-such-route', (c) => c.get('/v1/no-such-route')],
      ];
      const bodies = new Set<string>();
      for (const [where, headers] of elsewhere) {
        for (const [name, send] of requests) {
          const res = await send(asCaller(key.key, headers));
          expect(res.status, `${where}: ${name}: ${res.text}`).to.equal(403);
          expectNotAllowed(res);
          bodies.add(res.text);
        }
      }
      expect([...bodies], 'one answer for all').to.have.lengthOf(1);
      // None of the writes happened.
      const { count } = (await db.query(`SELECT count(*)::int AS count FROM contacts WHERE name = 'Intruder'`))[0];
      expect(count).to.equal(0);
      expect(expectStatus(await owner.as.get('/v1/organization'), 200).body.name).to.not.equal('Hijacked');
    });

    it('authentication comes first: an unknown or revoked key is 401 with any X-Tenant-Id', async () => {
      const doomed = await restrictedKey(owner, [mine[0]]);
      expectStatus(await asCaller(doomed.key, { 'X-Tenant-Id': mine[0] }).get('/v1/organization'), 200);
      expectStatus(await owner.as.delete(`/v1/api-keys/${doomed.key_id}`), 204);
      for (const headers of [{}, { 'X-Tenant-Id': mine[0] }, { 'X-Tenant-Id': theirs }] as Array<Record<string, string>>) {
        expectError(await asCaller(doomed.key, headers).get('/v1/organization'), 401, 'unauthorized');
        expectError(await asCaller(`${key.key}x`, headers).get('/v1/organization'), 401, 'unauthorized');
      }
    });

    it('cannot mint, list or revoke keys: outside its tenants 403 tenant_not_allowed_for_key, inside them not_available_for_tenant', async () => {
      const body = { label: 'escalation', permissions: ['operate', 'settings', 'api_keys', 'webhooks'] };
      expectNotAllowed(await postApiKey(key.key, body));
      expectNotAllowed(await postApiKey(key.key, { ...body, tenant_ids: [ownOther] }));
      expectNotAllowed(await asCaller(key.key).get('/v1/api-keys'));
      expectNotAllowed(await asCaller(key.key).delete(`/v1/api-keys/${owner.keyId}`));
      const inTenant = inside(mine[0]);
      expectError(await postApiKey(key.key, body, undefined, { 'X-Tenant-Id': mine[0] }), 403, 'not_available_for_tenant');
      expectError(await inTenant.get('/v1/api-keys'), 403, 'not_available_for_tenant');
      expectError(await inTenant.delete(`/v1/api-keys/${owner.keyId}`), 403, 'not_available_for_tenant');
      const keys = expectStatus(await listApiKeys(owner.key, 'limit=100'), 200).body.data;
      expect(keys.map((k: any) => k.label)).to.not.include('escalation');
      expect(keys.find((k: any) => k.key_id === owner.keyId)).to.be.an('object');
    });

    it('a disabled tenant stays reachable: reads work, writes are 403 tenant_disabled, as for every key', async () => {
      const [tenantId] = mine;
      expectStatus(await owner.as.patch(`/v1/tenants/${tenantId}`, { disabled: true }), 200);
      try {
        expect(expectStatus(await inside(tenantId).get('/v1/organization'), 200).body.id).to.equal(tenantId);
        expectStatus(await inside(tenantId).get(`/v1/contacts/${contacts.tenant}`), 200);
        expectError(await inside(tenantId).post('/v1/contacts', { name: 'While disabled', phone_number: uniquePhone() }), 403, 'tenant_disabled');
        expectError(await owner.inside(tenantId).post('/v1/contacts', { name: 'While disabled', phone_number: uniquePhone() }), 403, 'tenant_disabled');
        // Its other tenant is untouched; outside, still the same refusal.
        expectStatus(await inside(mine[1]).post('/v1/contacts', { name: 'Next door', phone_number: uniquePhone() }), 201);
        expectNotAllowed(await asCaller(key.key).get('/v1/organization'));
      } finally {
        expectStatus(await owner.as.patch(`/v1/tenants/${tenantId}`, { disabled: false }), 200);
      }
      expectStatus(await inside(tenantId).post('/v1/contacts', { name: 'Enabled again', phone_number: uniquePhone() }), 201);
    });

    it('when the operator takes reseller access away: 403 not_a_reseller inside its tenants, still tenant_not_allowed_for_key elsewhere', async () => {
      await setReseller(owner.id, false);
      try {
        expectError(await inside(mine[0]).get('/v1/organization'), 403, 'not_a_reseller');
        expectNotAllowed(await asCaller(key.key).get('/v1/organization'));
        expectNotAllowed(await inside(ownOther).get('/v1/organization'));
      } finally {
        await setReseller(owner.id, true);
      }
      expectStatus(await inside(mine[0]).get('/v1/organization'), 200);
    });
  });

  describe('the restriction travels with the cached key', () => {
    const processes = twoApiProcesses();

    for (const direction of ['A', 'B'] as const) {
      it(`revoked through process ${direction}: both processes answer 401 at once, whatever X-Tenant-Id`, async () => {
        const { a, b } = processes;
        const [revoker, other] = direction === 'A' ? [a, b] : [b, a];
        const owner = await reseller();
        const tenantId = (await createTenant(owner)).id;
        const victim = await restrictedKey(owner, [tenantId]);
        const send = (instance: RinglaneApp, headers: Record<string, string>) =>
          request(instance.app).get('/v1/organization').set('Authorization', bearer(victim.key)).set(headers);

        // Both processes hold the key in their cache, restriction included.
        for (const instance of [a, b]) {
          expectStatus(await send(instance, { 'X-Tenant-Id': tenantId }), 200);
          expectNotAllowed(await send(instance, {}));
        }
        expectStatus(await request(revoker.app).delete(`/v1/api-keys/${victim.key_id}`).set('Authorization', bearer(owner.key)), 204);
        for (const instance of [other, revoker]) {
          for (const headers of [{ 'X-Tenant-Id': tenantId }, {}] as Array<Record<string, string>>)
            expectError(await send(instance, headers), 401, 'unauthorized');
        }
        expectStatus(await request(other.app).get('/v1/organization').set('Authorization', bearer(owner.key)), 200);
      });
    }

    it('adds no statement to authentication: a cached restricted key is refused without one; inside a tenant, the first request looks the tenant up, and later ones, with either key, send none', async () => {
      const owner = await reseller();
      const tenantId = (await createTenant(owner)).id;
      const restricted = await restrictedKey(owner, [tenantId]);
      const log = new StatementLog();
      const dataSource = await log.dataSource();
      const instance = appOver({ db: dataSource });
      try {
        for (const method of ['findApiKey', 'findSession', 'findTenant']) log.own(CredentialStore, method);
        const send = (token: string, headers: Record<string, string> = {}) =>
          request(instance.app).get('/v1/organization').set('Authorization', bearer(token)).set(headers);
        // First use of each key: its one lookup, cached from then on.
        for (const token of [owner.key, restricted.key]) expectStatus(await send(token), token === owner.key ? 200 : 403);
        expect(log.sent.filter((s) => s.owners[0] === 'CredentialStore.findApiKey')).to.have.lengthOf(2);

        const statementsOf = async (token: string, headers: Record<string, string>, status: number) => {
          log.sent.length = 0;
          expectStatus(await send(token, headers), status);
          return log.sent.map((s) => `${s.owners[0]}: ${s.text}`);
        };
        const unrestrictedInside = await statementsOf(owner.key, { 'X-Tenant-Id': tenantId }, 200);
        expect(unrestrictedInside.map((s) => s.split(':')[0])).to.deep.equal(['CredentialStore.findTenant']);
        expect(await statementsOf(owner.key, { 'X-Tenant-Id': tenantId }, 200)).to.deep.equal([]);
        expect(await statementsOf(restricted.key, { 'X-Tenant-Id': tenantId }, 200)).to.deep.equal([]);
        for (const headers of [{}, { 'X-Tenant-Id': UNKNOWN_TENANT }, { 'X-Tenant-Id': owner.id }] as Array<Record<string, string>>) {
          expect(await statementsOf(restricted.key, headers, 403), JSON.stringify(headers)).to.deep.equal([]);
        }
      } finally {
        log.restore();
        await instance.close();
        await dataSource.destroy();
      }
    });
  });
});
