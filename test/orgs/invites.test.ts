import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { asCaller, createOrg, expectError, expectStatus, keyWith, uniqueEmail, walkList, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid, ISO_UTC, newestFirst } from '../helpers/org-resource.js';

const SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000;

describe('invites (CONTRACT.md "Other areas: closed to tenants")', () => {
  let org: TestOrg;
  let owner: Caller;
  beforeEach(async () => {
    org = await createOrg();
    owner = asCaller(org.key);
  });

  describe('POST /v1/invites', () => {
    it('answers 201 {id, email, capabilities, created_at, expires_at}, pending for 7 days', async () => {
      const email = uniqueEmail('new.person');
      const invite = expectStatus(await owner.post('/v1/invites', { email: `  ${email.toUpperCase()} `, capabilities: ['webhooks', 'operate'] }), 201).body;
      expect(invite).to.have.all.keys('id', 'email', 'capabilities', 'created_at', 'expires_at');
      expect(invite.id).to.match(/^inv_[0-9A-Za-z]{22}$/);
      expect(invite.email).to.equal(email.toLowerCase());
      expect(invite.capabilities).to.deep.equal(['operate', 'webhooks']);
      expect(invite.created_at).to.match(ISO_UTC);
      expect(invite.expires_at).to.match(ISO_UTC);
      expect(Date.parse(invite.expires_at) - Date.parse(invite.created_at)).to.equal(SEVEN_DAYS_MS);
      expect(Math.abs(Date.parse(invite.created_at) - Date.now())).to.be.below(60_000);
    });

    it('accepts an invite without capabilities (a member who can only read)', async () => {
      const invite = expectStatus(await owner.post('/v1/invites', { email: uniqueEmail(), capabilities: [] }), 201).body;
      expect(invite.capabilities).to.deep.equal([]);
    });

    const bad: [string, Record<string, unknown>, string][] = [
      ['a malformed email', { email: 'not-an-email', capabilities: [] }, 'email'],
      ['an email that is not a string', { email: 42, capabilities: [] }, 'email'],
      ['no email', { capabilities: [] }, 'email'],
      ['an unknown capability', { email: 'a@example.com', capabilities: ['operate', 'superuser'] }, 'capabilities.1'],
      ['a capability twice', { email: 'a@example.com', capabilities: ['operate', 'operate'] }, 'capabilities.1'],
      ['capabilities that are not a list', { email: 'a@example.com', capabilities: 'operate' }, 'capabilities'],
      ['no capabilities', { email: 'a@example.com' }, 'capabilities'],
      ['an unknown field', { email: 'a@example.com', capabilities: [], role: 'admin' }, 'role'],
      ['an id of its own', { email: 'a@example.com', capabilities: [], id: 'inv_mine' }, 'id'],
    ];
    for (const [what, body, path] of bad) {
      it(`is 400 for ${what}, and creates nothing`, async () => {
        expectInvalid(await owner.post('/v1/invites', body), path);
        expect(expectStatus(await owner.get('/v1/invites'), 200).body.data).to.deep.equal([]);
      });
    }

    it('needs the settings capability', async () => {
      const limited = asCaller(await keyWith(org, ['operate', 'api_keys', 'webhooks']));
      const res = await limited.post('/v1/invites', { email: uniqueEmail(), capabilities: ['operate'] });
      expect(expectError(res, 403, 'missing_capability').required).to.equal('settings');
      expect(expectStatus(await owner.get('/v1/invites'), 200).body.data).to.deep.equal([]);
    });

    it('never grants a capability the inviting credential lacks', async () => {
      const settingsOnly = asCaller(await keyWith(org, ['settings']));
      const invite = expectStatus(
        await settingsOnly.post('/v1/invites', { email: uniqueEmail(), capabilities: ['operate', 'settings', 'api_keys'] }),
        201,
      ).body;
      expect(invite.capabilities).to.deep.equal(['settings']);
    });

    it('is 409 invite_exists for a second pending invite of the same email, whatever its case', async () => {
      const email = uniqueEmail('twice');
      const first = expectStatus(await owner.post('/v1/invites', { email, capabilities: ['operate'] }), 201).body;
      expectError(await owner.post('/v1/invites', { email, capabilities: ['settings'] }), 409, 'invite_exists');
      expectError(await owner.post('/v1/invites', { email: email.toUpperCase(), capabilities: [] }), 409, 'invite_exists');
      expect(expectStatus(await owner.get('/v1/invites'), 200).body.data).to.deep.equal([first]);
    });

    it('lets exactly one of concurrent invites of the same email through', async () => {
      const email = uniqueEmail('race');
      const results = await Promise.all(Array.from({ length: 6 }, () => owner.post('/v1/invites', { email, capabilities: [] })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([201, 409, 409, 409, 409, 409]);
      expect(expectStatus(await owner.get('/v1/invites'), 200).body.data).to.have.lengthOf(1);
    });

    it('replaces an expired invite of the same email with a new one', async () => {
      const email = uniqueEmail('expired');
      const old = expectStatus(await owner.post('/v1/invites', { email, capabilities: ['operate'] }), 201).body;
      await db.query(`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [old.id]);
      const renewed = expectStatus(await owner.post('/v1/invites', { email, capabilities: ['settings'] }), 201).body;
      expect(renewed.id).to.not.equal(old.id);
      expect(renewed.capabilities).to.deep.equal(['settings']);
      expect(Date.parse(renewed.expires_at) - Date.parse(renewed.created_at)).to.equal(SEVEN_DAYS_MS);
      expect(Date.parse(renewed.expires_at)).to.be.above(Date.now());
      expect(expectStatus(await owner.get('/v1/invites'), 200).body.data).to.deep.equal([renewed]);
    });

    it('replays a repeat with the same Idempotency-Key instead of answering 409', async () => {
      const body = { email: uniqueEmail('idem'), capabilities: ['operate'] };
      const key = `invite-${Date.now()}`;
      const first = expectStatus(await asCaller(org.key, { 'Idempotency-Key': key }).post('/v1/invites', body), 201);
      const again = expectStatus(await asCaller(org.key, { 'Idempotency-Key': key }).post('/v1/invites', body), 201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
    });
  });

  describe('GET /v1/invites', () => {
    it('lists the invites newest first, page by page, readable without any capability', async () => {
      const created: any[] = [];
      for (let i = 0; i < 5; i++)
        created.push(expectStatus(await owner.post('/v1/invites', { email: uniqueEmail(`list${i}`), capabilities: ['operate'] }), 201).body);
      const reader = asCaller(await keyWith(org, []));
      const { pages, items } = await walkList(reader, '/v1/invites', 2);
      expect(pages.map((p) => p.data.length)).to.deep.equal([2, 2, 1]);
      expect(items).to.deep.equal(newestFirst(created));
      const first = expectStatus(await reader.get('/v1/invites'), 200).body;
      expect(first.data).to.have.lengthOf(5);
      expect(first.next_cursor).to.equal(null);
      expectInvalid(await reader.get('/v1/invites?limit=0'), 'limit');
      expectInvalid(await reader.get('/v1/invites?cursor=nonsense'), 'cursor');
      expectInvalid(await reader.get('/v1/invites?email=x'), 'email');
    });

    it('is scoped to the organization: another never sees them, and may invite the same email', async () => {
      const email = uniqueEmail('shared');
      const ours = expectStatus(await owner.post('/v1/invites', { email, capabilities: ['operate'] }), 201).body;
      const other = asCaller((await createOrg()).key);
      expect(expectStatus(await other.get('/v1/invites'), 200).body).to.deep.equal({ data: [], next_cursor: null });
      const theirs = expectStatus(await other.post('/v1/invites', { email, capabilities: [] }), 201).body;
      expect((await walkList(other, '/v1/invites', 100)).items).to.deep.equal([theirs]);
      expect((await walkList(owner, '/v1/invites', 100)).items).to.deep.equal([ours]);
    });
  });
});
