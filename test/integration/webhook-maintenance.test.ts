import { expect } from 'chai';
import request from 'supertest';
import { db } from '../../src/lib/db.js';
import { createQueue } from '../../src/lib/queues.js';
import { purgeOldDeliveries, sweepDeliveries } from '../../src/webhooks/webhook-maintenance.js';
import { WebhookJobs } from '../../src/webhooks/webhook.jobs.js';
import { app, bearer, createOrg } from '../helpers/api.js';
import { redisForTests } from '../helpers/redis.js';

async function endpointWithDeliveries(rows: Array<{ status: string; ageSeconds: number; createdDaysAgo?: number }>) {
  const org = await createOrg();
  const endpoint = await request(await app())
    .post('/v1/webhook-endpoints')
    .set('Authorization', bearer(org.key))
    .send({ name: 'E', url: 'http://127.0.0.1:9/hooks', secret: 'a-secret-value', outcomes: [] })
    .expect(201);
  const ids = rows.map((_, i) => `dlv_m${i}_${endpoint.body.id.slice(4, 14)}`);
  await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
     SELECT id, $1, $2, 'evt_' || id, 'call_x', 'call.completed', 4, status, 0, now() - make_interval(secs => age), now() - make_interval(days => days)
       FROM unnest($3::varchar[], $4::varchar[], $5::int[], $6::int[]) AS r(id, status, age, days)`,
    [org.id, endpoint.body.id, ids, rows.map((r) => r.status), rows.map((r) => r.ageSeconds), rows.map((r) => r.createdDaysAgo ?? 0)],
  );
  return { endpointId: endpoint.body.id as string, ids };
}

describe('webhook maintenance', () => {
  it('the sweeper queues every delivery that is due with no job (Postgres is the source of truth), once', async () => {
    const { ids } = await endpointWithDeliveries([
      { status: 'pending', ageSeconds: 60 },
      { status: 'retrying', ageSeconds: 60 },
      { status: 'retrying', ageSeconds: -3600 }, // not due yet
      { status: 'succeeded', ageSeconds: 60 },
    ]);
    const queue = createQueue('webhooks', redisForTests());
    try {
      const jobs = new WebhookJobs(queue, redisForTests());
      await sweepDeliveries(db, jobs);
      await sweepDeliveries(db, jobs);
      const queued = await Promise.all(ids.map((id) => queue.getJob(`${id}-a1`)));
      expect(queued.map((j) => j?.data.deliveryId ?? null)).to.deep.equal([ids[0], ids[1], null, null]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('purges delivery records older than WEBHOOK_RETENTION_DAYS (30), with their attempts', async () => {
    const { ids } = await endpointWithDeliveries([
      { status: 'succeeded', ageSeconds: 0, createdDaysAgo: 31 },
      { status: 'failed', ageSeconds: 0, createdDaysAgo: 29 },
    ]);
    await db.query(`INSERT INTO webhook_attempts (id, delivery_id, attempted_at, duration_ms) VALUES (gen_random_uuid(), $1, now(), 5)`, [ids[0]]);
    expect(await purgeOldDeliveries(db)).to.be.at.least(1);
    const left = await db.query('SELECT id FROM webhook_deliveries WHERE id = ANY($1)', [ids]);
    expect(left.map((r: { id: string }) => r.id)).to.deep.equal([ids[1]]);
    expect(await db.query('SELECT id FROM webhook_attempts WHERE delivery_id = $1', [ids[0]])).to.deep.equal([]);
  });
});
