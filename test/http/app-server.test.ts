import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { RinglaneApp } from '../../src/app.js';
import { createAppServer } from '../../src/http/app-server.js';
import { bearer, createOrg, newApp, type TestOrg } from '../helpers/api.js';

// The web process's server (src/server.ts): requests and responses built on the app's prototypes.
describe('the API server', () => {
  let ringlane: RinglaneApp;
  let server: Server;
  let base: string;
  let org: TestOrg;
  /** The prototypes of each request and response as the server made them, before Express saw them. */
  const arrived: Array<{ request: object | null; response: object | null }> = [];

  before(async () => {
    ringlane = await newApp();
    server = createAppServer(ringlane.app);
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      arrived.push({ request: Object.getPrototypeOf(req) as object, response: Object.getPrototypeOf(res) as object });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    org = await createOrg({}, base);
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await ringlane.close();
  });

  it('serves the API: reads, writes and errors as through any server', async () => {
    const headers = { authorization: bearer(org.key), 'content-type': 'application/json' };
    const created = await fetch(`${base}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'Served' }) });
    expect(created.status).to.equal(201);
    const { id } = (await created.json()) as { id: string };
    const listed = await fetch(`${base}/v1/agents`, { headers });
    expect(listed.status).to.equal(200);
    expect(listed.headers.get('x-request-id')).to.be.a('string');
    expect(((await listed.json()) as { data: Array<{ id: string }> }).data.map((a) => a.id)).to.include(id);
    const missing = await fetch(`${base}/v1/agents/agt_nope`, { headers });
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('agent_not_found');
    const refused = await fetch(`${base}/v1/agents`, { headers: { authorization: 'Bearer rk_live_nope' } });
    expect(refused.status).to.equal(401);
  });

  it('refuses hostile input with a 4xx and writes nothing', async () => {
    const headers = { authorization: bearer(org.key), 'content-type': 'application/json' };
    for (const body of ['{"name": "nul\\u0000"}', '{"name": "lone \\ud800"}', '{"name":', `${'['.repeat(5000)}${']'.repeat(5000)}`]) {
      const res = await fetch(`${base}/v1/agents`, { method: 'POST', headers, body });
      expect(res.status, body.slice(0, 20)).to.equal(400);
      expect(((await res.json()) as { error: { code: string } }).error.code, body.slice(0, 20)).to.be.a('string');
    }
    const listed = (await (await fetch(`${base}/v1/agents`, { headers })).json()) as { data: Array<{ name: string }> };
    expect(listed.data.map((a) => a.name)).to.deep.equal(['Served']);
  });

  it("builds each request and response on the app's own prototypes, so Express need not move them", () => {
    expect(arrived.length).to.be.greaterThan(4);
    for (const { request, response } of arrived) {
      expect(request).to.equal(ringlane.app.request);
      expect(response).to.equal(ringlane.app.response);
    }
  });
});
