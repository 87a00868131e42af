import { expect } from 'chai';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { createLogger } from '../../src/lib/logger.js';
import { bearer, createOrg } from '../helpers/api.js';
import { freePort, startProcess, stopProcess, waitForHttp } from '../helpers/processes.js';

// Values a log must never show; each is sent in a request that fails on our side.
const SECRET = 'whsec_c2VjcmV0LW5ldmVyLWxvZ2dlZC0xMjM0NTY3OA==';
const HEADER_VALUE = 'Bearer header-value-never-logged';
const EXTRA_VALUE = 'extra-payload-never-logged';
const METADATA_VALUE = 'metadata-never-logged-123-45-6789';
const IDEMPOTENCY_KEY = 'idempotency-key-never-logged';
const PASSWORD = 'password-never-logged';

/** A row insert that fails inside Postgres (as a broken disk or a bug would), for rows named `explode`. */
async function failInsertsNamedExplode(table: string): Promise<void> {
  await db.query(`CREATE OR REPLACE FUNCTION test_fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'simulated failure'; END $$`);
  await db.query(`CREATE TRIGGER test_fail_${table} BEFORE INSERT ON ${table} FOR EACH ROW WHEN (NEW.name = 'explode') EXECUTE FUNCTION test_fail_insert()`);
}

describe('nothing secret is logged (issue 9)', () => {
  it("a real web process logs a failing request's error with its request id, and none of the request's secrets", async function () {
    this.timeout(30_000);
    await failInsertsNamedExplode('webhook_endpoints');
    await failInsertsNamedExplode('contacts');
    const org = await createOrg();
    const port = await freePort();
    const web = startProcess('src/server.ts', { PORT: String(port), LOG_LEVEL: 'debug' });
    let output = '';
    web.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    web.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      const api = request(`http://127.0.0.1:${port}`);
      const endpoint = await api
        .post('/v1/webhook-endpoints')
        .set('Authorization', bearer(org.key))
        .set('Idempotency-Key', IDEMPOTENCY_KEY)
        .send({
          name: 'explode',
          url: 'https://example.com/hook',
          secret: SECRET,
          outcomes: [],
          custom_headers: { Authorization: HEADER_VALUE },
          extra_payload: { note: EXTRA_VALUE },
        });
      const contact = await api
        .post('/v1/contacts')
        .set('Authorization', bearer(org.key))
        .send({ name: 'explode', phone_number: '+14155550199', metadata: { ssn: METADATA_VALUE } });
      const signIn = await api.post('/v1/sessions').send({ email: 'nobody@example.com', password: PASSWORD });
      for (const res of [endpoint, contact]) {
        expect(res.status, res.text).to.equal(500);
        expect(res.body.error.code).to.equal('internal_error');
        expect(res.text).to.not.contain('simulated failure');
      }
      expect(signIn.status).to.equal(401);
      // The error lines are there (so this test sees the log it checks) ...
      for (const id of [endpoint.body.error.request_id, contact.body.error.request_id]) {
        while (!output.split('\n').some((line) => line.includes(id) && line.includes('unhandled error'))) await once(web.stdout!, 'data');
      }
      expect(output).to.contain('simulated failure');
      // Request lines carry the path as sent, mount point included.
      expect(output).to.match(/"method":"POST","path":"\/v1\/contacts","status":500/);
      // ... and nothing that was sent is.
      for (const secret of [SECRET, HEADER_VALUE, EXTRA_VALUE, METADATA_VALUE, IDEMPOTENCY_KEY, PASSWORD, org.key]) {
        expect(output, 'the log').to.not.contain(secret);
      }
    } finally {
      await stopProcess(web, 'SIGKILL');
      await db.query('DROP TRIGGER IF EXISTS test_fail_webhook_endpoints ON webhook_endpoints');
      await db.query('DROP TRIGGER IF EXISTS test_fail_contacts ON contacts');
    }
  });

  it('fields named like secrets are censored at any depth, and errors keep only type, message, stack, code and cause', () => {
    const lines: string[] = [];
    const log = createLogger('info', new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) }));
    const secretName = fc.constantFrom(
      'secret',
      'webhookSecret',
      'password',
      'token',
      'authorization',
      'Authorization',
      'key',
      'apiKey',
      'raw_key',
      'idempotency-key',
      'cookie',
    );
    const path = fc.array(fc.constantFrom('a', 'body', 'headers', 'data', 'items'), { maxLength: 6 });
    fc.assert(
      fc.property(
        path,
        secretName,
        fc.string({ minLength: 12 }).map((s) => `S3CR3T${s}`),
        (names, name, value) => {
          let object: Record<string, unknown> = { [name]: value, key_id: 'key_kept' };
          for (const outer of names.reverse()) object = { [outer]: object };
          lines.length = 0;
          log.info(object, 'line');
          expect(lines.join('')).to.not.contain(value);
          expect(lines.join('')).to.contain('key_kept');
        },
      ),
    );
    const err = Object.assign(new Error('duplicate key'), { code: '23505', parameters: [SECRET, METADATA_VALUE], query: 'INSERT ...' });
    lines.length = 0;
    log.error({ err }, 'failed');
    const logged = JSON.parse(lines[0]).err;
    expect(Object.keys(logged).sort()).to.deep.equal(['code', 'message', 'stack', 'type']);
    expect(lines[0]).to.not.contain(SECRET);
  });
});
