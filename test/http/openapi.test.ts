import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { apiReferenceFiles } from '../../src/http/api-reference.js';
import { openApiPath } from '../../src/http/openapi.js';
import { app, expectStatus, sharedApp } from '../helpers/api.js';

describe('the OpenAPI document', () => {
  it('is served at GET /v1/openapi.json without a credential, cacheable', async () => {
    const res = expectStatus(await request(await app()).get('/v1/openapi.json'), 200);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.headers['cache-control']).to.match(/max-age=\d+/);
    expect(res.body.openapi).to.equal('3.1.0');
    expect(res.body.paths).to.have.property('/v1/contacts/{id}');
  });

  it('has every /v1 route with its summary, capability and tenant rule', async () => {
    const { routes } = await sharedApp();
    const document = (await request(await app()).get('/v1/openapi.json')).body;
    const api = routes.filter((route) => route.path.startsWith('/v1/'));
    expect(api.length).to.be.above(40);
    for (const route of api) {
      const name = `${route.method.toUpperCase()} ${route.path}`;
      const operation = document.paths[openApiPath(route.path)]?.[route.method];
      expect(operation, name).to.be.an('object');
      expect(operation.summary, name).to.equal(route.summary);
      expect(operation['x-ringlane-capability'], name).to.equal(route.capability ?? null);
      if (route.caller === 'member') expect(operation['x-ringlane-tenant'], name).to.equal(route.tenant ?? 'allowed');
      if (route.capability) expect(operation.responses['403'].description, name).to.contain('missing_capability');
      if (route.tenant === 'forbidden') expect(operation.responses['403'].description, name).to.contain('not_available_for_tenant');
    }
    expect(document.paths['/v1/tenants/{id}/limits'].patch).to.deep.include({ 'x-ringlane-capability': 'settings', 'x-ringlane-tenant': 'forbidden' });
    expect(document.paths['/v1/sessions'].post.security).to.deep.equal([]);
  });

  it('is committed in docs/, rendered, as `npm run docs:api` writes it', async () => {
    const files = apiReferenceFiles((await sharedApp()).routes);
    for (const [file, text] of Object.entries(files)) {
      expect(readFileSync(file, 'utf8') === text, `${file} is stale: run npm run docs:api`).to.equal(true);
    }
  });
});
