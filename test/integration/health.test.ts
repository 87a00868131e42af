import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createRedis } from '../../src/lib/redis.js';
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

describe('readiness without Redis', () => {
  it('GET /readyz answers 503 naming Redis when it does not answer', async () => {
    const deadRedis = createRedis('command', 'redis://127.0.0.1:1');
    deadRedis.on('error', () => undefined);
    try {
      const { app: lonely } = createApp({ redis: deadRedis });
      const res = await request(lonely).get('/readyz').expect(503);
      expect(res.body.status).to.equal('unavailable');
      expect(res.body.checks.postgres).to.equal('ok');
      expect(res.body.checks.redis).to.match(/^unavailable/);
    } finally {
      deadRedis.disconnect();
    }
  });
});
