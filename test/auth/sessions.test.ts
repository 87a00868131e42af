import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { createRedis } from '../../src/lib/redis.js';
import { createRuntime } from '../../src/runtime.js';
import {
  addMember,
  appOver,
  createOrg,
  expectError,
  expectRateLimited,
  expectStatus,
  listApiKeys,
  postApiKey,
  sha256Hex,
  signIn,
  twoApiProcesses,
  uniqueEmail,
} from '../helpers/api.js';
import { redisForTests, unreachableRedis } from '../helpers/redis.js';

const PASSWORD = 'correct horse battery staple';

/** A member of a new organization, with a password unless `password` is null. */
async function member(capabilities: string[] = ['operate', 'api_keys'], password: string | null = PASSWORD, email = uniqueEmail('signin')) {
  const org = await createOrg();
  const added = await addMember(org.id, { email, capabilities, ...(password === null ? {} : { password }) });
  return { org, email, memberId: added.memberId };
}

/** Signs in and asserts 201; returns the session token. */
async function sessionOf(email: string, password = PASSWORD): Promise<string> {
  return expectStatus(await signIn({ email, password }), 201).body.token;
}

describe('sessions: POST /v1/sessions (CONTRACT.md §2, §3)', () => {
  it('answers 201 {token, expires_at} for a member with a password', async () => {
    const { email } = await member();
    const before = Date.now();
    const res = expectStatus(await signIn({ email, password: PASSWORD }), 201);
    expect(res.body).to.have.all.keys('token', 'expires_at');
    expect(res.body.token).to.be.a('string').with.length.above(30);
    expect(res.body.expires_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Date.parse(res.body.expires_at)).to.be.above(before);
  });

  it('the token works as a Bearer credential for the member’s organization', async () => {
    const { email, org } = await member();
    const token = await sessionOf(email);
    const list = expectStatus(await listApiKeys(token), 200).body;
    expect(list.data.map((k: any) => k.key_id)).to.include(org.keyId);
  });

  it('each sign-in gives a different token', async () => {
    const { email } = await member();
    expect(await sessionOf(email)).to.not.equal(await sessionOf(email));
  });

  it('a wrong password and an unknown email are both 401 unauthorized, alike', async () => {
    const { email } = await member();
    const wrongPassword = expectError(await signIn({ email, password: `${PASSWORD}!` }), 401, 'unauthorized');
    const unknownEmail = expectError(await signIn({ email: uniqueEmail('nobody'), password: PASSWORD }), 401, 'unauthorized');
    expect(unknownEmail).to.deep.equal(wrongPassword);
  });

  it('a member without a password cannot sign in', async () => {
    const { email } = await member(['operate'], null);
    for (const password of [PASSWORD, 'x', 'null']) expectError(await signIn({ email, password }), 401, 'unauthorized');
  });

  it('the email is case-insensitive', async () => {
    const email = uniqueEmail('MixedCase').replace('@example.com', '@Example.COM');
    await member(['operate'], PASSWORD, email);
    for (const variant of [email, email.toLowerCase(), email.toUpperCase()]) await sessionOf(variant);
  });

  it('stores the password only as an scrypt hash', async () => {
    const { memberId } = await member();
    const [row] = await db.query('SELECT * FROM members WHERE id = $1', [memberId]);
    expect(row.password_hash)
      .to.be.a('string')
      .and.match(/^scrypt\$/);
    expect(JSON.stringify(row)).to.not.include(PASSWORD);
  });

  it('stores the session token only as a hash', async () => {
    const { memberId, email } = await member();
    const token = await sessionOf(email);
    const rows = await db.query('SELECT * FROM sessions WHERE member_id = $1', [memberId]);
    expect(rows).to.have.lengthOf(1);
    expect(rows[0].token_hash).to.equal(sha256Hex(token));
    expect(JSON.stringify(rows)).to.not.include(token.slice(8));
  });

  it('a key created with a session gets requested ∩ the member’s capabilities', async () => {
    const { email } = await member(['api_keys', 'webhooks']);
    const token = await sessionOf(email);
    const created = expectStatus(await postApiKey(token, { label: 'from a session', permissions: ['operate', 'settings', 'api_keys', 'webhooks'] }), 201);
    expect(created.body.permissions).to.have.members(['api_keys', 'webhooks']);
  });

  it('a session carries the member’s capabilities: without api_keys, no key creation', async () => {
    const { email } = await member(['operate']);
    const token = await sessionOf(email);
    const error = expectError(await postApiKey(token, { label: 'x', permissions: [] }), 403, 'missing_capability');
    expect(error.required).to.equal('api_keys');
  });

  it('an expired session is 401', async () => {
    const { email } = await member();
    const token = await sessionOf(email);
    expectStatus(await listApiKeys(token), 200);
    await db.query(`UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`, [sha256Hex(token)]);
    expectError(await listApiKeys(token), 401, 'unauthorized');
  });

  it('the maintenance purge deletes expired sessions and keeps live ones', async () => {
    const { email } = await member();
    const [expired, live] = [await sessionOf(email), await sessionOf(email)];
    await db.query(`UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`, [sha256Hex(expired)]);
    const runtime = createRuntime({ db, redis: redisForTests() });
    try {
      expect(await runtime.services.sessions.purgeExpired()).to.be.at.least(1);
    } finally {
      await runtime.close();
    }
    const left = await db.query('SELECT token_hash FROM sessions WHERE token_hash = ANY($1)', [[sha256Hex(expired), sha256Hex(live)]]);
    expect(left).to.deep.equal([{ token_hash: sha256Hex(live) }]);
  });

  describe('400 invalid_request', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['an empty body', {}, 'email'],
      ['a missing password', { email: 'a@example.com' }, 'password'],
      ['a missing email', { password: PASSWORD }, 'email'],
      ['an email that is not one', { email: 'not-an-email', password: PASSWORD }, 'email'],
      ['a password that is not a string', { email: 'a@example.com', password: 12345678 }, 'password'],
      ['an unknown field', { email: 'a@example.com', password: PASSWORD, remember: true }, 'remember'],
    ];
    for (const [name, body, path] of cases) {
      it(`for ${name}, naming "${path}"`, async () => {
        const error = expectError(await signIn(body), 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
      });
    }
  });

  describe('limits on failed sign-ins, per email and per client address', () => {
    // Two API processes behind one proxy hop, so each test can come from addresses of its own
    // (X-Forwarded-For) and the shared app's 127.0.0.1 budget stays untouched.
    const processes = twoApiProcesses({ trustProxy: 1 });
    const WINDOW_SECONDS = 15 * 60;
    const WRONG = `${PASSWORD}?`;
    let lastOctet = 0;
    const newAddress = () => `203.0.113.${++lastOctet}`;
    const from = (target: Express, address: string, email: string, password: string) =>
      request(target).post('/v1/sessions').set('X-Forwarded-For', address).send({ email, password });

    it('after 10 wrong passwords, even the right one is 429 with Retry-After, on every process and from any address', async () => {
      const { email } = await member();
      const address = newAddress();
      for (let i = 0; i < 10; i++) {
        const target = i % 2 ? processes.b.app : processes.a.app;
        expectError(await from(target, address, email, WRONG), 401, 'unauthorized');
      }
      for (const [target, origin] of [
        [processes.a.app, address],
        [processes.b.app, address],
        [processes.a.app, newAddress()],
      ] as const) {
        const error = expectRateLimited(await from(target, origin, email, PASSWORD), WINDOW_SECONDS);
        expect(error.message).to.match(/failed sign-ins per email/);
      }
      // Still locked: refused attempts are not counted, so nothing moved the window on.
      expectRateLimited(await from(processes.b.app, address, email, PASSWORD), WINDOW_SECONDS);
    });

    it('another email from the same address still signs in', async () => {
      const { email: locked } = await member();
      const { email: other } = await member();
      const address = newAddress();
      for (let i = 0; i < 10; i++) expectError(await from(processes.a.app, address, locked, WRONG), 401, 'unauthorized');
      expectRateLimited(await from(processes.a.app, address, locked, PASSWORD), WINDOW_SECONDS);
      expectStatus(await from(processes.a.app, address, other, PASSWORD), 201);
    });

    it('a successful sign-in does not count as a failure', async () => {
      const { email } = await member();
      const address = newAddress();
      for (let i = 0; i < 9; i++) expectError(await from(processes.a.app, address, email, WRONG), 401, 'unauthorized');
      for (let i = 0; i < 3; i++) expectStatus(await from(processes.a.app, address, email, PASSWORD), 201);
      // The 10th failure: a 429 here would mean the successes had been counted.
      expectError(await from(processes.a.app, address, email, WRONG), 401, 'unauthorized');
      expectRateLimited(await from(processes.a.app, address, email, PASSWORD), WINDOW_SECONDS);
    });

    it('unknown emails count too, and 50 failures from one address lock it for every email; even in parallel, no more get through', async () => {
      const { email } = await member();
      const address = newAddress();
      const guesses = await Promise.all(
        Array.from({ length: 55 }, (_, i) => from(i % 2 ? processes.b.app : processes.a.app, address, uniqueEmail('guess'), WRONG)),
      );
      const statuses = guesses.map((res) => res.status).sort();
      expect(statuses).to.deep.equal([...Array(50).fill(401), ...Array(5).fill(429)]);
      const error = expectRateLimited(await from(processes.a.app, address, email, PASSWORD), WINDOW_SECONDS);
      expect(error.message).to.match(/failed sign-ins per client address/);
      expectStatus(await from(processes.a.app, newAddress(), email, PASSWORD), 201);
    });

    it("an IPv6 client is limited by its /64, one subscriber's usual share", async () => {
      const { email } = await member();
      const guesses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => from(processes.a.app, `2001:db8:5:6::${(i + 1).toString(16)}`, uniqueEmail('guess'), WRONG)),
      );
      for (const res of guesses) expectError(res, 401, 'unauthorized');
      expectRateLimited(await from(processes.a.app, '2001:db8:5:6:ffff:ffff:ffff:ffff', email, PASSWORD), WINDOW_SECONDS);
      expectStatus(await from(processes.a.app, '2001:db8:5:7::1', email, PASSWORD), 201);
    });

    it('answers 503 service_unavailable when Redis is away', async () => {
      const { email } = await member();
      const deadRedis = createRedis('command', unreachableRedis().target);
      deadRedis.on('error', () => undefined);
      try {
        const lonely = appOver({ redis: deadRedis });
        expectError(await request(lonely.app).post('/v1/sessions').send({ email, password: PASSWORD }), 503, 'service_unavailable');
        await lonely.close();
      } finally {
        deadRedis.disconnect();
      }
    });
  });
});
