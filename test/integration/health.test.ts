import { expect } from 'chai';
import request from 'supertest';
import { app } from '../helpers/api.js';

describe('health', () => {
  it('GET /healthz answers 200 while the process is up', async () => {
    const res = await request(await app()).get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz answers 200 when Postgres and Redis answer', async () => {
    const res = await request(await app()).get('/readyz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });
});
