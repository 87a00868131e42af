import { expect } from 'chai';
import request from 'supertest';
import { app, bearer, createOrg, expectError, operator, type TestOrg } from '../helpers/api.js';

const ONE_MB = 1024 * 1024;

/** A raw JSON request (the body is sent as is, not serialized). */
async function sendRaw(path: string, raw: string, authorization?: string) {
  let req = request(await app())
    .post(path)
    .set('Content-Type', 'application/json');
  if (authorization) req = req.set('Authorization', authorization);
  return req.send(raw);
}

/** A body whose JSON text is `bytes` long, with a `label` filling it out. */
const jsonOfSize = (bytes: number) => {
  const shell = JSON.stringify({ label: '', permissions: [] });
  return JSON.stringify({ label: 'x'.repeat(bytes - shell.length), permissions: [] });
};

/** No trace of a stack or of the server's files in a response. */
function expectNoInternals(res: request.Response): void {
  const text = res.text;
  expect(text, 'a stack frame').to.not.match(/\bat [^\n]*[/\\][^\n]*:\d+/);
  expect(text, 'a stack frame').to.not.match(/\n\s+at /);
  expect(text).to.not.include(process.cwd());
  expect(text).to.not.include('node_modules');
  expect(text).to.not.match(/\.(ts|js):\d+/);
}

describe('errors (CONTRACT.md §2 "Errors")', () => {
  let org: TestOrg;
  before(async () => {
    org = await createOrg();
  });

  describe('unknown routes are 404 not_found', () => {
    const cases: [string, string, () => string | undefined][] = [
      ['GET', '/nope', () => undefined],
      ['POST', '/v2/api-keys', () => undefined],
      ['GET', '/v1/nope', () => bearer(org.key)],
      ['PUT', '/v1/api-keys', () => bearer(org.key)],
      ['GET', '/admin/v1/nope', operator],
    ];
    for (const [method, path, authorization] of cases) {
      it(`${method} ${path}`, async () => {
        let req = request(await app())[method.toLowerCase() as 'get' | 'post' | 'put'](path);
        const auth = authorization();
        if (auth) req = req.set('Authorization', auth);
        const res = await req;
        expectError(res, 404, 'not_found');
        expectNoInternals(res);
      });
    }
  });

  describe('malformed JSON is 400 invalid_request with details', () => {
    const bodies = ['{"label": ', '{label: "x"}', "{'label': 'x'}", '"a string"', '{"label":"x",}'];
    for (const raw of bodies) {
      it(`for ${raw}`, async () => {
        const res = await sendRaw('/v1/api-keys', raw, bearer(org.key));
        const error = expectError(res, 400, 'invalid_request');
        expect(error.details).to.be.an('array').that.is.not.empty;
        for (const d of error.details) {
          expect(d.path).to.be.a('string').that.is.not.empty;
          expect(d.message).to.be.a('string').that.is.not.empty;
        }
        expectNoInternals(res);
      });
    }

    it('also on sign-in and on the admin API', async () => {
      const targets: [string, string | undefined][] = [
        ['/v1/sessions', undefined],
        ['/admin/v1/orgs', operator()],
      ];
      for (const [path, authorization] of targets) {
        const res = await sendRaw(path, '{"oops', authorization);
        expectError(res, 400, 'invalid_request');
        expectNoInternals(res);
      }
    });
  });

  describe('body size', () => {
    it('a JSON body over 1 MB is 413 payload_too_large', async () => {
      const res = await sendRaw('/v1/api-keys', jsonOfSize(ONE_MB + 1024), bearer(org.key));
      expectError(res, 413, 'payload_too_large');
      expectNoInternals(res);
    });

    it('a JSON body just under 1 MB is read (and then validated)', async () => {
      const res = await sendRaw('/v1/api-keys', jsonOfSize(ONE_MB - 1024), bearer(org.key));
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details.map((d: { path: string }) => d.path)).to.include('label');
    });
  });

  describe('bad input in the path', () => {
    it('a malformed percent-encoding in a path id is 404 <resource>_not_found, as an id that cannot exist, not a server error', async () => {
      const res = await request(await app())
        .delete('/v1/api-keys/%E0%A4%A')
        .set('Authorization', bearer(org.key));
      expectError(res, 404, 'api_key_not_found');
      expectNoInternals(res);
    });

    it('the same on the admin API', async () => {
      const res = await request(await app())
        .patch('/admin/v1/orgs/%E0%A4%A')
        .set('Authorization', operator())
        .send({ tenant_limit: 1 });
      expectError(res, 404, 'organization_not_found');
      expectNoInternals(res);
    });

    it('elsewhere in a path, it names no route: 404 not_found; authentication still comes first', async () => {
      expectError(
        await request(await app())
          .get('/v1/%ff')
          .set('Authorization', bearer(org.key)),
        404,
        'not_found',
      );
      expectError(
        await request(await app())
          .post('/v1/events/%ff')
          .set('Authorization', bearer(org.key))
          .send({}),
        404,
        'not_found',
      );
      expectError(await request(await app()).get('/v1/events/%ff'), 401, 'unauthorized');
    });
  });

  it('no error response carries a stack trace or a file path', async () => {
    const a = await app();
    const responses = await Promise.all([
      request(a).get('/v1/balance'),
      request(a).get('/v1/balance').set('Authorization', bearer('rk_live_unknown')),
      request(a)
        .post('/v1/api-keys')
        .set('Authorization', bearer(org.key))
        .send({ label: 7, permissions: ['x'], extra: 1 }),
      request(a).get('/v1/api-keys?limit=1000&cursor=%%%').set('Authorization', bearer(org.key)),
      request(a).delete('/v1/api-keys/key_nope').set('Authorization', bearer(org.key)),
      request(a).post('/admin/v1/orgs').send({}),
      request(a).post('/admin/v1/orgs/org_nope/balance').set('Authorization', operator()).send({ amount: '1' }),
      request(a).post('/v1/sessions').send({ email: 'nobody@example.com', password: 'x' }),
      request(a).post('/v1/api-keys').set('Authorization', bearer(org.key)).set('Content-Type', 'application/json').set('Content-Encoding', 'nope').send('{}'),
    ]);
    for (const res of responses) {
      expect(res.status, res.text).to.be.within(400, 599);
      expect(res.body.error?.code, res.text).to.be.a('string');
      expectNoInternals(res);
    }
  });
});
