import { expect } from 'chai';
import request from 'supertest';
import { app, bearer, createOrg, expectError, type TestOrg } from '../helpers/api.js';

// The API's routes are matched by ApiRouter, not by a nested Express router: what Express's
// routing gave callers must still hold.
describe('routing of /v1 requests', () => {
  let org: TestOrg;
  let agentId: string;
  before(async () => {
    org = await createOrg();
    const created = await request(await app())
      .post('/v1/agents')
      .set('Authorization', bearer(org.key))
      .send({ name: 'Routed' })
      .expect(201);
    agentId = created.body.id;
  });
  const get = async (path: string) =>
    request(await app())
      .get(path)
      .set('Authorization', bearer(org.key));

  it('matches paths case-insensitively and with a trailing slash, as Express does', async () => {
    for (const path of ['/v1/agents', '/v1/agents/', '/v1/AGENTS', '/V1/Agents/']) {
      const res = await get(path);
      expect(res.status, path).to.equal(200);
      expect(
        res.body.data.map((a: { id: string }) => a.id),
        path,
      ).to.include(agentId);
    }
    expect((await get(`/v1/agents/${agentId}/`)).body.id).to.equal(agentId);
  });

  it('percent-decodes path parameters', async () => {
    const encoded = [...agentId].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    expect((await get(`/v1/agents/${encoded}`)).body.id).to.equal(agentId);
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await request(await app())
      .head('/v1/agents')
      .set('Authorization', bearer(org.key));
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.text ?? '').to.equal('');
  });

  it('answers OPTIONS with the methods of the path', async () => {
    const list = await request(await app())
      .options('/v1/agents')
      .set('Authorization', bearer(org.key));
    expect(list.status).to.equal(200);
    expect(list.headers.allow).to.equal('GET, HEAD, POST');
    const one = await request(await app())
      .options(`/v1/agents/${agentId}`)
      .set('Authorization', bearer(org.key));
    expect(one.headers.allow).to.equal('DELETE, GET, HEAD, PATCH');
  });

  it('a method a path does not take, or a path under no route, is 404 not_found', async () => {
    expectError(
      await request(await app())
        .put('/v1/agents')
        .set('Authorization', bearer(org.key))
        .send({}),
      404,
      'not_found',
    );
    expectError(await get('/v1/agents/x/y'), 404, 'not_found');
    expectError(await get('/v1/nothing-here'), 404, 'not_found');
  });
});
