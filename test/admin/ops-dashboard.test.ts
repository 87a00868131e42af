import { expect } from 'chai';
import request from 'supertest';
import { config } from '../../src/config.js';
import { app, operator } from '../helpers/api.js';

describe('support tools behind the operator token (CONTRACT.md §3)', () => {
  it('GET /admin/queues: 401 without the token (asking a browser for it), the dashboard with it, by Bearer or Basic', async () => {
    const refused = await request(await app()).get('/admin/queues');
    expect(refused.status).to.equal(401);
    expect(refused.headers['www-authenticate']).to.match(/^Basic /);
    expect(
      (
        await request(await app())
          .get('/admin/queues')
          .set('Authorization', 'Bearer wrong-token-000000')
      ).status,
    ).to.equal(401);
    const page = await request(await app())
      .get('/admin/queues')
      .set('Authorization', operator());
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('Ringlane queues');
    const basic = Buffer.from(`support:${config.operatorToken}`).toString('base64');
    expect(
      (
        await request(await app())
          .get('/admin/queues')
          .set('Authorization', `Basic ${basic}`)
      ).status,
    ).to.equal(200);
  });

  it('GET /metrics: 401 without the token; Prometheus text with queue depths and webhook metrics with it', async () => {
    expect((await request(await app()).get('/metrics')).status).to.equal(401);
    const res = await request(await app())
      .get('/metrics')
      .set('Authorization', operator());
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/plain/);
    for (const queue of ['calls', 'webhooks', 'tenants', 'usage', 'maintenance']) {
      expect(res.text).to.match(new RegExp(`ringlane_queue_jobs\\{queue="${queue}",state="waiting"\\} \\d+`));
    }
    expect(res.text).to.contain('# TYPE ringlane_webhook_attempts_total counter');
    expect(res.text).to.contain('ringlane_webhook_end_to_end_seconds_bucket{le="+Inf"}');
    expect(res.text).to.contain('ringlane_process_cpu_seconds_total');
  });
});
