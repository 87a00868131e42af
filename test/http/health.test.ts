import { once } from 'node:events';
import { expect } from 'chai';
import request from 'supertest';
import { createRedis } from '../../src/lib/redis.js';
import { app, appOver } from '../helpers/api.js';
import { unreachableRedis } from '../helpers/redis.js';

describe('health', () => {
  it('GET /healthz answers 200 while the process is up', async () => {
    const res = await request(await app())
      .get('/healthz')
      .expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz answers 200 when Postgres and Redis answer', async () => {
    const res = await request(await app())
      .get('/readyz')
      .expect(200);
    expect(res.body).to.deep.equal({ status: 'ready', checks: { postgres: 'ok', redis: 'ok', replica: 'not configured' } });
  });
});

describe('readiness without Redis', () => {
  it('GET /readyz answers 503 naming Redis when it does not answer; its reconnection attempts print nothing to stderr', async () => {
    // Each queue re-emits its connection's errors; unheard, BullMQ printed every one's stack.
    const printed: string[] = [];
    const write = process.stderr.write.bind(process.stderr) as (...args: unknown[]) => boolean;
    process.stderr.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return write(chunk, ...rest);
    };
    const deadRedis = createRedis('command', unreachableRedis().target);
    const lonely = appOver({ redis: deadRedis });
    try {
      const res = await request(lonely.app).get('/readyz').expect(503);
      expect(res.body.status).to.equal('unavailable');
      expect(res.body.checks.postgres).to.equal('ok');
      expect(res.body.checks.redis).to.match(/^unavailable/);
      // Two failed attempts at least, each passed on to every queue of the app.
      for (let i = 0; i < 2; i++) await once(deadRedis, 'error');
    } finally {
      process.stderr.write = write;
      await lonely.close();
      deadRedis.disconnect();
    }
    expect(printed.join('')).to.equal('');
  });
});
