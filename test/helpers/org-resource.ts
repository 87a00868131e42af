import { expect } from 'chai';
import type request from 'supertest';
import { asCaller, createOrg, expectError, expectStatus, insertTenant, keyWith, walkList, type Caller, type TestOrg } from './api.js';

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Asserts 400 `invalid_request` whose details name `path`; returns the error. */
export function expectInvalid(res: request.Response, path: string): Record<string, any> {
  const error = expectError(res, 400, 'invalid_request');
  expect(error.details).to.be.an('array').that.is.not.empty;
  expect(
    error.details.map((d: { path: string }) => d.path),
    JSON.stringify(error.details),
  ).to.include(path);
  for (const d of error.details) expect(d.message).to.be.a('string').that.is.not.empty;
  return error;
}

let numberCounter = 0;
/**
 * A phone number no other test of this run uses. UK numbers: the simulated carrier picks
 * +1 numbers, so a number it picks never collides with one of these.
 */
export const uniqueNumber = () => `+4420${String(process.pid % 10_000).padStart(4, '0')}${String(numberCounter++).padStart(4, '0')}`;

/**
 * `resources` in list order: newest first by (created_at, id), so resources created within
 * the same millisecond still have one order.
 */
export function newestFirst<T extends { id: string; created_at: string }>(resources: T[]): T[] {
  return [...resources].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? 1 : -1));
}

export interface OrgResourceSpec {
  /** The collection path, such as `/v1/agents`. */
  path: string;
  /** snake_case resource name: unknown ids are 404 `<resource>_not_found`. */
  resource: string;
  idPrefix: string;
  capability: 'operate' | 'settings';
  /** Every field of the resource as the API shows it. */
  fields: string[];
  /** A valid create body, different for each `n`. */
  create(n: number): Record<string, unknown>;
  /** A valid update body for a resource of the caller's organization; each field is asserted changed. */
  update(caller: Caller): Promise<Record<string, unknown>>;
}

/** Creates `n` resources as `caller`, one after another; returns them oldest first. */
export async function createMany(caller: Caller, spec: Pick<OrgResourceSpec, 'path' | 'create'>, n: number): Promise<any[]> {
  const created: any[] = [];
  for (let i = 0; i < n; i++) created.push(expectStatus(await caller.post(spec.path, spec.create(i)), 201).body);
  return created;
}

/**
 * The behaviour every resource an organization owns shares: create, read, list (newest
 * first, by pages), update, delete; 404 for unknown ids and for every other organization's;
 * writes gated by a capability; unknown fields refused.
 */
export function behavesLikeAnOrgResource(spec: OrgResourceSpec): void {
  describe(`${spec.path} as a resource of the organization`, () => {
    let org: TestOrg;
    let other: TestOrg;
    let owner: Caller;
    let stranger: Caller;
    before(async () => {
      org = await createOrg();
      other = await createOrg();
      owner = asCaller(org.key);
      stranger = asCaller(other.key);
    });

    it('POST answers 201 with the resource, and GET reads the same back', async () => {
      const body = spec.create(1000);
      const created = expectStatus(await owner.post(spec.path, body), 201).body;
      expect(created).to.have.all.keys(...spec.fields);
      expect(created.id).to.match(new RegExp(`^${spec.idPrefix}_[0-9A-Za-z]{22}$`));
      for (const [field, value] of Object.entries(body)) expect(created[field], field).to.deep.equal(value);
      expect(created.created_at).to.match(ISO_UTC);
      expect(created.updated_at).to.equal(created.created_at);
      const read = expectStatus(await owner.get(`${spec.path}/${created.id}`), 200).body;
      expect(read).to.deep.equal(created);
    });

    it('PATCH changes the given fields and keeps the others', async () => {
      const [created] = await createMany(owner, { path: spec.path, create: (i) => spec.create(2000 + i) }, 1);
      const changes = await spec.update(owner);
      const updated = expectStatus(await owner.patch(`${spec.path}/${created.id}`, changes), 200).body;
      expect(updated).to.have.all.keys(...spec.fields);
      for (const [field, value] of Object.entries(changes)) expect(updated[field], field).to.deep.equal(value);
      const untouched = spec.fields.filter((f) => !(f in changes) && f !== 'updated_at');
      for (const field of untouched) expect(updated[field], field).to.deep.equal(created[field]);
      expect(Date.parse(updated.updated_at)).to.be.at.least(Date.parse(created.updated_at));
      expect(expectStatus(await owner.get(`${spec.path}/${created.id}`), 200).body).to.deep.equal(updated);
    });

    it('DELETE answers 204; the resource is gone from reads and lists', async () => {
      const [created] = await createMany(owner, { path: spec.path, create: (i) => spec.create(3000 + i) }, 1);
      const res = expectStatus(await owner.delete(`${spec.path}/${created.id}`), 204);
      expect(res.text).to.equal('');
      expectError(await owner.get(`${spec.path}/${created.id}`), 404, `${spec.resource}_not_found`);
      expectError(await owner.delete(`${spec.path}/${created.id}`), 404, `${spec.resource}_not_found`);
      const { items } = await walkList(owner, spec.path, 100);
      expect(items.map((r) => r.id)).to.not.include(created.id);
    });

    it('lists newest first, page by page, each resource once', async () => {
      const fresh = await createOrg();
      const caller = asCaller(fresh.key);
      const created = await createMany(caller, { path: spec.path, create: (i) => spec.create(4000 + i) }, 5);
      const { pages, items } = await walkList(caller, spec.path, 2);
      expect(pages.map((p) => p.data.length)).to.deep.equal([2, 2, 1]);
      expect(items).to.deep.equal(newestFirst(created));
      const first = expectStatus(await caller.get(spec.path), 200).body;
      expect(first.data).to.have.lengthOf(5);
      expect(first.next_cursor).to.equal(null);
    });

    it('refuses a bad limit or cursor with 400 naming it', async () => {
      expectInvalid(await owner.get(`${spec.path}?limit=0`), 'limit');
      expectInvalid(await owner.get(`${spec.path}?limit=101`), 'limit');
      expectInvalid(await owner.get(`${spec.path}?cursor=nonsense`), 'cursor');
    });

    it('answers 404 for an id that does not exist', async () => {
      const id = `${spec.idPrefix}_${'0'.repeat(22)}`;
      const code = `${spec.resource}_not_found`;
      expectError(await owner.get(`${spec.path}/${id}`), 404, code);
      expectError(await owner.patch(`${spec.path}/${id}`, await spec.update(owner)), 404, code);
      expectError(await owner.delete(`${spec.path}/${id}`), 404, code);
    });

    it("answers 404 for another organization's resource, and leaves it alone", async () => {
      const [theirs] = await createMany(stranger, { path: spec.path, create: (i) => spec.create(5000 + i) }, 1);
      const code = `${spec.resource}_not_found`;
      expectError(await owner.get(`${spec.path}/${theirs.id}`), 404, code);
      expectError(await owner.patch(`${spec.path}/${theirs.id}`, await spec.update(owner)), 404, code);
      expectError(await owner.delete(`${spec.path}/${theirs.id}`), 404, code);
      const { items } = await walkList(owner, spec.path, 100);
      expect(items.map((r) => r.id)).to.not.include(theirs.id);
      expect(expectStatus(await stranger.get(`${spec.path}/${theirs.id}`), 200).body).to.deep.equal(theirs);
    });

    it("keeps a tenant's resources and its reseller's apart", async () => {
      const reseller = await createOrg();
      const tenantId = await insertTenant(reseller);
      const outside = asCaller(reseller.key);
      const inside = asCaller(reseller.key, { 'X-Tenant-Id': tenantId });
      const [own] = await createMany(outside, { path: spec.path, create: (i) => spec.create(6000 + i) }, 1);
      const [tenants] = await createMany(inside, { path: spec.path, create: (i) => spec.create(6100 + i) }, 1);
      expect((await walkList(outside, spec.path, 100)).items.map((r) => r.id)).to.deep.equal([own.id]);
      expect((await walkList(inside, spec.path, 100)).items.map((r) => r.id)).to.deep.equal([tenants.id]);
      expectError(await inside.get(`${spec.path}/${own.id}`), 404, `${spec.resource}_not_found`);
      expectError(await outside.get(`${spec.path}/${tenants.id}`), 404, `${spec.resource}_not_found`);
    });

    it(`needs the ${spec.capability} capability to write; reading needs none`, async () => {
      const [created] = await createMany(owner, { path: spec.path, create: (i) => spec.create(7000 + i) }, 1);
      const others = ['operate', 'settings', 'api_keys', 'webhooks'].filter((c) => c !== spec.capability);
      const limited = asCaller(await keyWith(org, others));
      const writes = [
        await limited.post(spec.path, spec.create(7100)),
        await limited.patch(`${spec.path}/${created.id}`, await spec.update(owner)),
        await limited.delete(`${spec.path}/${created.id}`),
      ];
      for (const res of writes) expect(expectError(res, 403, 'missing_capability').required).to.equal(spec.capability);
      const reader = asCaller(await keyWith(org, []));
      expect(expectStatus(await reader.get(`${spec.path}/${created.id}`), 200).body).to.deep.equal(created);
      expectStatus(await reader.get(spec.path), 200);
    });

    it('refuses unknown fields and an empty PATCH with 400', async () => {
      const [created] = await createMany(owner, { path: spec.path, create: (i) => spec.create(8000 + i) }, 1);
      expectInvalid(await owner.post(spec.path, { ...spec.create(8100), surprise: 1 }), 'surprise');
      expectInvalid(await owner.post(spec.path, { ...spec.create(8200), id: 'mine' }), 'id');
      expectInvalid(await owner.patch(`${spec.path}/${created.id}`, { ...(await spec.update(owner)), org_id: other.id }), 'org_id');
      expectError(await owner.patch(`${spec.path}/${created.id}`, {}), 400, 'invalid_request');
      expectInvalid(await owner.get(`${spec.path}?surprise=1`), 'surprise');
    });

    it('answers 404 for ids that cannot exist (too long, NUL, spaces), on every route with an id', async () => {
      for (const id of ['x'.repeat(41), 'a%00b', '%F0%9F%98%80', 'a%20b']) {
        expectError(await owner.get(`${spec.path}/${id}`), 404, `${spec.resource}_not_found`);
        expectError(await owner.patch(`${spec.path}/${id}`, await spec.update(owner)), 404, `${spec.resource}_not_found`);
        expectError(await owner.delete(`${spec.path}/${id}`), 404, `${spec.resource}_not_found`);
      }
    });
  });
}
