import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import type { RinglaneApp } from '../../src/app.js';
import { db } from '../helpers/db.js';
import {
  addMember,
  app,
  bearer,
  createOrg,
  expectError,
  expectRateLimited,
  expectStatus,
  listApiKeys,
  newApp,
  twoApiProcesses,
  postApiKey,
  sha256Hex,
  uniqueEmail,
  type TestOrg,
} from '../helpers/api.js';

const ALL = ['operate', 'settings', 'api_keys', 'webhooks'];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Creates a key through the API and asserts 201; returns the response body. */
async function createKey(token: string, permissions: string[] = [], label = 'a key', target?: Express) {
  return expectStatus(await postApiKey(token, { label, permissions }, target), 201).body;
}

async function revoke(token: string, keyId: string) {
  return request(await app())
    .delete(`/v1/api-keys/${keyId}`)
    .set('Authorization', bearer(token));
}

/** Every key of the token's organization, walking the pages `limit` at a time. */
async function walkPages(token: string, limit: number): Promise<{ pages: any[]; keys: any[] }> {
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = expectStatus(await listApiKeys(token, query), 200).body;
    pages.push(page);
    cursor = page.next_cursor;
    expect(pages.length, 'pagination does not end').to.be.below(50);
  } while (cursor !== null);
  return { pages, keys: pages.flatMap((p) => p.data) };
}

/** `count` creations in a row on `target`; returns their statuses. */
async function createMany(token: string, count: number, target?: Express): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await postApiKey(token, { label: `burst ${i}`, permissions: [] }, target)).status);
  return statuses;
}

/**
 * `listed` holds each of `createdOldestFirst` exactly once, newest first: ordered by
 * (created_at, key_id) descending, so keys created in the same millisecond still have one order.
 */
function expectNewestFirst(listed: any[], createdOldestFirst: string[]): void {
  const ids = listed.map((k) => k.key_id);
  expect(new Set(ids).size, 'no key twice').to.equal(ids.length);
  expect(ids).to.have.members(createdOldestFirst);
  expect(ids[0]).to.equal(createdOldestFirst[createdOldestFirst.length - 1]);
  expect(ids[ids.length - 1]).to.equal(createdOldestFirst[0]);
  for (let i = 1; i < listed.length; i++) {
    const [newer, older] = [listed[i - 1], listed[i]];
    const order = Date.parse(newer.created_at) - Date.parse(older.created_at) || (newer.key_id > older.key_id ? 1 : -1);
    expect(order, `${newer.key_id} listed before ${older.key_id}`).to.be.above(0);
  }
}

describe('API keys (SPEC.md §2.4, §4.3, §5; CONTRACT.md "API key")', () => {
  describe('POST /v1/api-keys', () => {
    // Each test has its own organization: creations are limited to 5 per hour per organization.
    let org: TestOrg;
    beforeEach(async () => {
      org = await createOrg();
    });

    it('answers 201 with the key record and the raw key', async () => {
      const res = expectStatus(await postApiKey(org.key, { label: 'CI deploy', permissions: ['operate', 'webhooks'] }), 201);
      const body = res.body;
      expect(body).to.have.all.keys('key_id', 'label', 'permissions', 'tenant_ids', 'prefix', 'created_at', 'last_used_at', 'key');
      expect(body.key).to.match(/^rk_live_[0-9A-Za-z]{32,}$/);
      expect(body.prefix).to.have.lengthOf(12).and.equal(body.key.slice(0, 12));
      expect(body.key_id).to.match(/^key_/);
      expect(body.label).to.equal('CI deploy');
      expect(body.permissions).to.have.members(['operate', 'webhooks']);
      expect(body.created_at).to.match(ISO_UTC);
      expect(Math.abs(Date.parse(body.created_at) - Date.now())).to.be.below(60_000);
      expect(body.last_used_at).to.equal(null);
      expect(body.tenant_ids, 'a key of the whole account (CONTRACT.md §5)').to.equal(null);
    });

    it('makes a key that authenticates', async () => {
      const { key } = await createKey(org.key);
      expectStatus(await listApiKeys(key), 200);
    });

    it('never shows the raw key again in GET /v1/api-keys', async () => {
      const created = await createKey(org.key, ['operate']);
      const list = expectStatus(await listApiKeys(org.key, 'limit=100'), 200).body;
      const listed = list.data.find((k: any) => k.key_id === created.key_id);
      const { key: _raw, ...record } = created;
      expect(listed).to.deep.equal(record);
      const text = JSON.stringify(list);
      expect(text).to.not.include(created.key);
      expect(text).to.not.include(created.key.slice(12));
    });

    it('stores only the SHA-256 hash of the raw key, never the key', async () => {
      const created = await createKey(org.key);
      const rows: Record<string, unknown>[] = await db.query('SELECT * FROM api_keys');
      const row = rows.find((r) => r.id === created.key_id);
      expect(row, 'the key row').to.not.equal(undefined);
      expect(row!.key_hash).to.equal(sha256Hex(created.key));
      for (const r of rows) {
        for (const [column, value] of Object.entries(r)) {
          expect(JSON.stringify(value) ?? '', `api_keys.${column}`).to.not.include(created.key.slice(12));
        }
      }
    });

    describe('granted permissions = requested ∩ member capabilities ∩ calling key permissions, silently', () => {
      it('a member with [operate, api_keys] asking for all four gets [operate, api_keys]', async () => {
        const member = await addMember(org.id, { email: uniqueEmail('grant'), capabilities: ['operate', 'api_keys'] });
        const created = await createKey(member.key, ALL);
        expect(created.permissions).to.have.members(['operate', 'api_keys']);
      });

      it('a key holding only [api_keys] asking for [operate, api_keys] gets [api_keys]', async () => {
        const narrow = await createKey(org.key, ['api_keys']);
        const created = await createKey(narrow.key, ['operate', 'api_keys']);
        expect(created.permissions).to.deep.equal(['api_keys']);
      });

      it('a key never gets more than was requested', async () => {
        const created = await createKey(org.key, ['settings']);
        expect(created.permissions).to.deep.equal(['settings']);
      });

      it('the granted permissions are what the key can do', async () => {
        const member = await addMember(org.id, { email: uniqueEmail('grant'), capabilities: ['operate', 'api_keys'] });
        const narrow = await createKey(member.key, ['operate']);
        const res = await postApiKey(narrow.key, { label: 'x', permissions: [] });
        expect(expectError(res, 403, 'missing_capability').required).to.equal('api_keys');
      });
    });

    describe('400 invalid_request', () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ['an unknown permission name', { label: 'x', permissions: ['operate', 'admin'] }, 'permissions.1'],
        ['a permission that is not a string', { label: 'x', permissions: [7] }, 'permissions.0'],
        ['permissions that are not an array', { label: 'x', permissions: 'operate' }, 'permissions'],
        ['a missing label', { permissions: [] }, 'label'],
        ['an empty label', { label: '   ', permissions: [] }, 'label'],
        ['a label that is not a string', { label: 42, permissions: [] }, 'label'],
        ['missing permissions', { label: 'x' }, 'permissions'],
        ['an unknown field', { label: 'x', permissions: [], colour: 'blue' }, 'colour'],
      ];
      for (const [name, body, path] of cases) {
        it(`for ${name}, naming "${path}" in details`, async () => {
          const error = expectError(await postApiKey(org.key, body), 400, 'invalid_request');
          expect(error.details).to.be.an('array').that.is.not.empty;
          expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
          for (const d of error.details) expect(d.message).to.be.a('string').that.is.not.empty;
        });
      }

      it('creates nothing', async () => {
        expectStatus(await postApiKey(org.key, { label: 'x', permissions: ['root'] }), 400);
        const list = expectStatus(await listApiKeys(org.key), 200).body;
        expect(list.data.map((k: any) => k.key_id)).to.deep.equal([org.keyId]);
      });
    });
  });

  describe('DELETE /v1/api-keys/{key_id}', () => {
    it('answers 204; the key is refused from then on and gone from the list', async () => {
      const org = await createOrg();
      const victim = await createKey(org.key);
      expectStatus(await listApiKeys(victim.key), 200);
      const res = expectStatus(await revoke(org.key, victim.key_id), 204);
      expect(res.text).to.equal('');
      expectError(await listApiKeys(victim.key), 401, 'unauthorized');
      const list = expectStatus(await listApiKeys(org.key), 200).body;
      expect(list.data.map((k: any) => k.key_id)).to.not.include(victim.key_id);
    });

    it('a key can revoke itself', async () => {
      const org = await createOrg();
      const self = await createKey(org.key, ['api_keys']);
      expectStatus(await revoke(self.key, self.key_id), 204);
      expectError(await listApiKeys(self.key), 401, 'unauthorized');
    });

    it('an unknown id is 404 api_key_not_found', async () => {
      const org = await createOrg();
      expectError(await revoke(org.key, 'key_doesnotexist'), 404, 'api_key_not_found');
    });

    it('an already revoked key is 404 api_key_not_found', async () => {
      const org = await createOrg();
      const victim = await createKey(org.key);
      expectStatus(await revoke(org.key, victim.key_id), 204);
      expectError(await revoke(org.key, victim.key_id), 404, 'api_key_not_found');
    });

    it("another organization's key is 404 and keeps working", async () => {
      const mine = await createOrg();
      const theirs = await createOrg();
      expectError(await revoke(mine.key, theirs.keyId), 404, 'api_key_not_found');
      expectStatus(await listApiKeys(theirs.key), 200);
      const list = expectStatus(await listApiKeys(theirs.key), 200).body;
      expect(list.data.map((k: any) => k.key_id)).to.include(theirs.keyId);
    });
  });

  describe('GET /v1/api-keys', () => {
    let org: TestOrg;
    /** The org's key ids, oldest first. */
    const created: string[] = [];

    before(async () => {
      org = await createOrg();
      created.push(org.keyId);
      for (let i = 0; i < 4; i++) created.push((await createKey(org.key, [], `key ${i}`)).key_id);
      for (let i = 0; i < 2; i++) {
        const member = await addMember(org.id, { email: uniqueEmail('list'), capabilities: ['operate'] });
        created.push(member.body.api_key.key_id);
      }
    });

    it('answers {data, next_cursor}, newest first, only the organization’s keys', async () => {
      await createOrg(); // another organization's keys must not show
      const body = expectStatus(await listApiKeys(org.key), 200).body;
      expect(body).to.have.all.keys('data', 'next_cursor');
      expect(body.next_cursor).to.equal(null);
      expectNewestFirst(body.data, created);
      for (const k of body.data) {
        expect(k).to.have.all.keys('key_id', 'label', 'permissions', 'tenant_ids', 'prefix', 'created_at', 'last_used_at');
        expect(k.tenant_ids).to.equal(null);
        expect(k.prefix).to.match(/^rk_live_[0-9A-Za-z]{4}$/);
      }
    });

    for (const limit of [1, 2, 3, 7, 100]) {
      it(`walking pages of ${limit} returns every key exactly once, in order`, async () => {
        const { pages, keys } = await walkPages(org.key, limit);
        expectNewestFirst(keys, created);
        expect(pages).to.have.lengthOf(Math.max(1, Math.ceil(created.length / limit)));
        for (const page of pages.slice(0, -1)) {
          expect(page.data).to.have.lengthOf(limit);
          expect(page.next_cursor).to.be.a('string').that.is.not.empty;
        }
      });
    }

    it('defaults to 20 per page', async () => {
      const fresh = await createOrg();
      for (let i = 0; i < 20; i++) await addMember(fresh.id, { email: uniqueEmail('many'), capabilities: [] });
      const first = expectStatus(await listApiKeys(fresh.key), 200).body;
      expect(first.data).to.have.lengthOf(20);
      expect(first.next_cursor).to.be.a('string');
      const second = expectStatus(await listApiKeys(fresh.key, `cursor=${encodeURIComponent(first.next_cursor)}`), 200).body;
      expect(second.data.map((k: any) => k.key_id)).to.deep.equal([fresh.keyId]);
      expect(second.next_cursor).to.equal(null);
    });

    const badQueries: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=2.5', 'limit'],
      ['cursor=garbage', 'cursor'],
      [`cursor=${Buffer.from('{"at":1}').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from('["not a date","key_x"]').toString('base64url')}`, 'cursor'],
      ['colour=blue', 'colour'],
    ];
    for (const [query, path] of badQueries) {
      it(`?${query} is 400 invalid_request naming "${path}"`, async () => {
        const error = expectError(await listApiKeys(org.key, query), 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
      });
    }

    it('a well-formed cursor with a time Postgres cannot hold is 400, not a server error', async () => {
      const cursor = Buffer.from(JSON.stringify([-8.64e15, 'key_x'])).toString('base64url');
      const error = expectError(await listApiKeys(org.key, `cursor=${cursor}`), 400, 'invalid_request');
      expect(error.details.map((d: { path: string }) => d.path)).to.include('cursor');
    });
  });

  describe('last_used_at', () => {
    let instance: RinglaneApp;
    before(async () => {
      instance = await newApp();
    });
    after(async () => {
      await instance.close();
    });

    it('becomes non-null once the key is used and the batched write is flushed', async () => {
      const org = await createOrg();
      const used = await createKey(org.key);
      const unused = await createKey(org.key);
      const before = Date.now();
      expectStatus(await listApiKeys(used.key, '', instance.app), 200);
      await instance.credentials.flushLastUsed();

      const list = expectStatus(await listApiKeys(org.key, 'limit=100'), 200).body;
      const byId = (id: string) => list.data.find((k: any) => k.key_id === id);
      expect(byId(used.key_id).last_used_at).to.match(ISO_UTC);
      expect(Date.parse(byId(used.key_id).last_used_at)).to.be.within(before - 1000, Date.now() + 1000);
      expect(byId(unused.key_id).last_used_at).to.equal(null);
    });
  });

  describe('rate limit: 5 creations per hour per organization (SPEC.md §8)', () => {
    const processes = twoApiProcesses();

    it('the 6th creation is 429 rate_limited with a Retry-After in seconds', async () => {
      const org = await createOrg();
      expect(await createMany(org.key, 5)).to.deep.equal([201, 201, 201, 201, 201]);
      expectRateLimited(await postApiKey(org.key, { label: 'sixth', permissions: [] }), 3600);
      const list = expectStatus(await listApiKeys(org.key, 'limit=100'), 200).body;
      expect(list.data).to.have.lengthOf(6); // the owner key and the five
    });

    it('holds across API processes: 3 on A and 2 on B, then the 6th is refused on either', async () => {
      const org = await createOrg();
      expect(await createMany(org.key, 3, processes.a.app)).to.deep.equal([201, 201, 201]);
      expect(await createMany(org.key, 2, processes.b.app)).to.deep.equal([201, 201]);
      expectRateLimited(await postApiKey(org.key, { label: 'sixth', permissions: [] }, processes.a.app), 3600);
      expectRateLimited(await postApiKey(org.key, { label: 'sixth', permissions: [] }, processes.b.app), 3600);
    });

    it('another organization is unaffected', async () => {
      const busy = await createOrg();
      const calm = await createOrg();
      await createMany(busy.key, 5);
      expectRateLimited(await postApiKey(busy.key, { label: 'sixth', permissions: [] }), 3600);
      expect(await createMany(calm.key, 5)).to.deep.equal([201, 201, 201, 201, 201]);
    });

    it('an idempotent replay does not count', async () => {
      const org = await createOrg();
      const headers = { 'Idempotency-Key': `replay-${org.id}` };
      const body = { label: 'once', permissions: [] };
      for (let i = 0; i < 4; i++) expectStatus(await postApiKey(org.key, body, undefined, headers), 201);
      expect(await createMany(org.key, 4)).to.deep.equal([201, 201, 201, 201]);
      expectRateLimited(await postApiKey(org.key, { label: 'sixth', permissions: [] }), 3600);
    });

    it('a refused request (400, 403) does not count', async () => {
      const org = await createOrg();
      const weak = await createKey(org.key, ['operate']); // 1st creation
      for (let i = 0; i < 3; i++) {
        expectStatus(await postApiKey(org.key, { label: 'x', permissions: ['root'] }), 400);
        expectStatus(await postApiKey(weak.key, { label: 'x', permissions: [] }), 403);
      }
      expect(await createMany(org.key, 4)).to.deep.equal([201, 201, 201, 201]);
      expectRateLimited(await postApiKey(org.key, { label: 'sixth', permissions: [] }), 3600);
    });
  });
});
