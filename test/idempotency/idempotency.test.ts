import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { RecordSecrets } from '../../src/idempotency/idempotency.service.js';
import { redisKey } from '../../src/lib/redis.js';
import { db } from '../helpers/db.js';
import { redisForTests } from '../helpers/redis.js';
import {
  app,
  createOrg,
  expectError,
  expectStatus,
  keyWith,
  listApiKeys,
  signIn,
  uniqueEmail,
  addMember,
  asCaller,
  operator,
  postApiKey,
  type TestOrg,
} from '../helpers/api.js';

const BODY = { label: 'idempotent', permissions: ['operate'] };

/** `POST /v1/api-keys` with an `Idempotency-Key`. */
const createWithKey = (org: TestOrg, key: string, body: Record<string, unknown> = BODY) => postApiKey(org.key, body, undefined, { 'Idempotency-Key': key });

/** The ids of the organization's keys, besides its owner key. */
async function createdKeyIds(org: TestOrg): Promise<string[]> {
  const list = expectStatus(await listApiKeys(org.key, 'limit=100'), 200).body;
  return list.data.map((k: any) => k.key_id).filter((id: string) => id !== org.keyId);
}

function expectFirstRun(res: request.Response, status = 201): void {
  expectStatus(res, status);
  expect(res.headers['idempotent-replayed'], 'Idempotent-Replayed on a first run').to.equal(undefined);
}

function expectReplayOf(res: request.Response, original: request.Response): void {
  expectStatus(res, original.status);
  expect(res.headers['idempotent-replayed']).to.equal('true');
  expect(res.body).to.deep.equal(original.body);
}

describe('idempotency (CONTRACT.md §2 "Idempotency")', () => {
  let org: TestOrg;
  let key: string;
  beforeEach(async () => {
    org = await createOrg();
    key = randomUUID();
  });

  it('the same key and body replays the status and body with Idempotent-Replayed: true, and runs once', async () => {
    const first = await createWithKey(org, key);
    expectFirstRun(first);
    for (let i = 0; i < 3; i++) expectReplayOf(await createWithKey(org, key), first);
    expect(await createdKeyIds(org)).to.deep.equal([first.body.key_id]);
  });

  it('concurrent requests with one key run it once; the others replay it or get 409', async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, () => createWithKey(org, key)));
    const ran = responses.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(ran, 'requests that ran').to.have.lengthOf(1);
    for (const res of responses) {
      if (res === ran[0]) continue;
      if (res.status === 409) expectError(res, 409, 'idempotency_key_in_use');
      else expectReplayOf(res, ran[0]);
    }
    expect(await createdKeyIds(org)).to.deep.equal([ran[0].body.key_id]);
  });

  it('without the header, the same body runs every time', async () => {
    expectFirstRun(await postApiKey(org.key, BODY));
    expectFirstRun(await postApiKey(org.key, BODY));
    expect(await createdKeyIds(org)).to.have.lengthOf(2);
  });

  it('the same key with a different body is 422 idempotency_key_reused, and runs nothing', async () => {
    expectFirstRun(await createWithKey(org, key));
    for (const body of [
      { ...BODY, label: 'another' },
      { ...BODY, permissions: ['webhooks'] },
    ]) {
      expectError(await createWithKey(org, key, body), 422, 'idempotency_key_reused');
    }
    expect(await createdKeyIds(org)).to.have.lengthOf(1);
  });

  it('while the first request is still running, 409 idempotency_key_in_use', async () => {
    // A request that claimed the key and has not finished yet leaves a record without a response.
    const secrets = new RecordSecrets({ scope: org.id, credential: org.keyId }, key);
    await db.query(`INSERT INTO idempotency_records (scope, credential, key_hash, request_hash, response_status) VALUES ($1, $2, $3, $4, NULL)`, [
      org.id,
      org.keyId,
      secrets.keyHash,
      secrets.fingerprint({ method: 'POST', path: '/v1/api-keys', body: BODY }),
    ]);
    expectError(await createWithKey(org, key), 409, 'idempotency_key_in_use');
    expect(await createdKeyIds(org)).to.deep.equal([]);
  });

  it('stores neither the Idempotency-Key nor the raw API key of the response: only a sealed form', async () => {
    const first = await createWithKey(org, key);
    expectFirstRun(first);
    const rows = await db.query('SELECT * FROM idempotency_records WHERE scope = $1', [org.id]);
    expect(rows).to.have.lengthOf(1);
    const stored = JSON.stringify(rows);
    expect(stored).to.not.contain(first.body.key);
    expect(stored).to.not.contain(first.body.key.slice(12));
    expect(stored).to.not.contain(key);
    expectReplayOf(await createWithKey(org, key), first);
  });

  it('a key of 255 characters is accepted; 256 is 400 invalid_request naming the header', async () => {
    expectFirstRun(await createWithKey(org, 'k'.repeat(255)));
    const error = expectError(await createWithKey(org, 'k'.repeat(256)), 400, 'invalid_request');
    expect(error.details.map((d: { path: string }) => d.path)).to.include('Idempotency-Key');
    expect(await createdKeyIds(org)).to.have.lengthOf(1);
  });

  it('keys are per organization: the same key in another organization runs independently', async () => {
    const other = await createOrg();
    const mine = await createWithKey(org, key);
    const theirs = await createWithKey(other, key);
    expectFirstRun(mine);
    expectFirstRun(theirs);
    expect(theirs.body.key_id).to.not.equal(mine.body.key_id);
    expect(await createdKeyIds(org)).to.deep.equal([mine.body.key_id]);
    expect(await createdKeyIds(other)).to.deep.equal([theirs.body.key_id]);
  });

  it('a record older than 24 hours is not replayed: the request runs anew', async () => {
    const first = await createWithKey(org, key);
    expectFirstRun(first);
    await db.query(`UPDATE idempotency_records SET created_at = now() - interval '25 hours' WHERE scope = $1 AND key_hash = $2`, [
      org.id,
      new RecordSecrets({ scope: org.id, credential: org.keyId }, key).keyHash,
    ]);
    const again = await createWithKey(org, key);
    expectFirstRun(again);
    expect(again.body.key_id).to.not.equal(first.body.key_id);
    expect(await createdKeyIds(org)).to.have.members([first.body.key_id, again.body.key_id]);
    // ...and the new run is the one replayed from now on.
    expectReplayOf(await createWithKey(org, key), again);
  });

  describe('records belong to the credential that sent the request (issue 9)', () => {
    const ALL = { label: 'deploy', permissions: ['operate', 'settings', 'api_keys', 'webhooks'] };

    it("another key's request with the same Idempotency-Key runs as its own: the owner's raw key is never handed over", async () => {
      const owners = await createWithKey(org, key, ALL);
      expectFirstRun(owners);
      const memberKey = await keyWith(org, ['api_keys']);
      const members = await postApiKey(memberKey, ALL, undefined, { 'Idempotency-Key': key });
      expectFirstRun(members);
      expect(members.body.key).to.not.equal(owners.body.key);
      expect(members.body.key_id).to.not.equal(owners.body.key_id);
      // The member's new key is bounded by the member: it cannot change the organization.
      expect(members.body.permissions).to.deep.equal(['api_keys']);
      expectError(await asCaller(members.body.key).patch('/v1/organization', { name: 'Taken over' }), 403, 'missing_capability');
      // Each credential still replays its own response.
      expectReplayOf(await createWithKey(org, key, ALL), owners);
      expectReplayOf(await postApiKey(memberKey, ALL, undefined, { 'Idempotency-Key': key }), members);
    });

    it("a session's request and a key's request with one Idempotency-Key are separate requests", async () => {
      const email = uniqueEmail('idem');
      await addMember(org.id, { email, capabilities: ['api_keys'], password: 'a long password' });
      const session = expectStatus(await signIn({ email, password: 'a long password' }), 201).body.token;
      const byKey = await createWithKey(org, key);
      const bySession = await postApiKey(session, BODY, undefined, { 'Idempotency-Key': key });
      expectFirstRun(byKey);
      expectFirstRun(bySession);
      expect(bySession.body.key_id).to.not.equal(byKey.body.key_id);
    });
  });

  describe('only successes are stored; an error leaves the key free (issue 9)', () => {
    const recordCount = async () => Number((await db.query('SELECT count(*)::int AS n FROM idempotency_records WHERE scope = $1', [org.id]))[0].n);

    it('a 429 is answered with Retry-After every time, never replayed, and the key works once the window allows', async () => {
      // The organization's hourly allowance of key creations (5), used up without the header.
      for (let i = 0; i < 5; i++) expectFirstRun(await postApiKey(org.key, { ...BODY, label: `fill ${i}` }));
      for (let i = 0; i < 2; i++) {
        const limited = await createWithKey(org, key);
        expectError(limited, 429, 'rate_limited');
        expect(limited.headers['retry-after'], 'Retry-After').to.match(/^\d+$/);
        expect(limited.headers['idempotent-replayed']).to.equal(undefined);
      }
      expect(await recordCount()).to.equal(0);
      await redisForTests().del(redisKey('ratelimit', org.id, 'api-key-create', org.id));
      expectFirstRun(await createWithKey(org, key));
    });

    it('bad input (400), a missing capability (403) and an unknown id (404) store nothing; the same key then runs', async () => {
      expectError(await createWithKey(org, key, { label: 'x', permissions: ['root'] }), 400, 'invalid_request');
      const readOnly = await keyWith(org, []);
      expectError(await postApiKey(readOnly, BODY, undefined, { 'Idempotency-Key': key }), 403, 'missing_capability');
      expectError(
        await asCaller(org.key, { 'Idempotency-Key': key }).post('/v1/webhook-deliveries/dlv_doesnotexist/retry', {}),
        404,
        'webhook_delivery_not_found',
      );
      expect(await recordCount()).to.equal(0);
      expectFirstRun(await createWithKey(org, key));
      expect(await recordCount()).to.equal(1);
    });
  });

  describe('on the admin API', () => {
    const createOrgWithKey = async (idempotencyKey: string, body: Record<string, unknown>) =>
      request(await app())
        .post('/admin/v1/orgs')
        .set('Authorization', operator())
        .set('Idempotency-Key', idempotencyKey)
        .send(body);

    const orgsNamed = async (name: string) => (await db.query('SELECT id FROM organizations WHERE name = $1', [name])).map((r: { id: string }) => r.id);

    it('POST /admin/v1/orgs replays, and creates one organization', async () => {
      const body = { name: `Idempotent ${key}`, balance: '5' };
      const first = await createOrgWithKey(key, body);
      expectFirstRun(first);
      expectReplayOf(await createOrgWithKey(key, body), first);
      expect(await orgsNamed(body.name)).to.deep.equal([first.body.org.id]);
    });

    it('POST /admin/v1/orgs with the same key and another body is 422 idempotency_key_reused', async () => {
      const body = { name: `Reused ${key}` };
      expectFirstRun(await createOrgWithKey(key, body));
      expectError(await createOrgWithKey(key, { name: `Other ${key}` }), 422, 'idempotency_key_reused');
      expect(await orgsNamed(`Other ${key}`)).to.deep.equal([]);
    });

    it('POST /admin/v1/orgs/{id}/balance applies an adjustment once', async () => {
      const send = async () =>
        request(await app())
          .post(`/admin/v1/orgs/${org.id}/balance`)
          .set('Authorization', operator())
          .set('Idempotency-Key', key)
          .send({ amount: '1.5' });
      const first = await send();
      expectFirstRun(first, 200);
      expect(first.body.balance).to.equal('1.500000');
      expectReplayOf(await send(), first);
      const [{ sum }] = await db.query('SELECT COALESCE(SUM(amount_micros), 0)::text AS sum FROM ledger_entries WHERE org_id = $1', [org.id]);
      expect(sum).to.equal('1500000');
    });
  });
});
