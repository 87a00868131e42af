import { expect } from 'chai';
import request from 'supertest';
import { db } from '../../src/lib/db.js';
import { createPool } from '../../src/lib/db.js';
import { purgeOldDeliveries } from '../../src/webhooks/webhook-maintenance.js';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository.js';
import { app, bearer, createOrg } from '../helpers/api.js';

async function endpointWithDeliveries(rows: Array<{ status: string; ageSeconds: number; createdDaysAgo?: number }>) {
  const org = await createOrg();
  const endpoint = await request(await app())
    .post('/v1/webhook-endpoints')
    .set('Authorization', bearer(org.key))
    .send({ name: 'E', url: 'http://127.0.0.1:9/hooks', secret: 'a-secret-value', outcomes: [] })
    .expect(201);
  const ids = rows.map((_, i) => `dlv_m${i}_${endpoint.body.id.slice(4, 14)}`);
  await db.query(
    `INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at, relayed_at)
     SELECT 'evt_' || id, 'call_' || id, $1, 4, 'call.completed', '{"event": "call.completed"}', now(), now() FROM unnest($2::varchar[]) AS id`,
    [org.id, ids],
  );
  await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
     SELECT id, $1, $2, 'evt_' || id, 'call_x', 'call.completed', 4, status, 0, now() - make_interval(secs => age), now() - make_interval(days => days)
       FROM unnest($3::varchar[], $4::varchar[], $5::int[], $6::int[]) AS r(id, status, age, days)`,
    [org.id, endpoint.body.id, ids, rows.map((r) => r.status), rows.map((r) => r.ageSeconds), rows.map((r) => r.createdDaysAgo ?? 0)],
  );
  return { endpointId: endpoint.body.id as string, ids };
}

describe('webhook maintenance', () => {
  describe('claiming due deliveries (Postgres is the delivery queue)', () => {
    const pool = createPool(4);
    const repository = new WebhookDeliveryRepository(pool);
    after(() => pool.end());

    it('claims only due deliveries of enabled endpoints, and leases them: a second claim gets none of them', async () => {
      const { ids } = await endpointWithDeliveries([
        { status: 'pending', ageSeconds: 60 },
        { status: 'retrying', ageSeconds: 60 },
        { status: 'retrying', ageSeconds: -3600 }, // not due yet
        { status: 'succeeded', ageSeconds: 60 },
        { status: 'failed', ageSeconds: 60 },
      ]);
      const mine = (rows: Array<{ delivery_id: string }>) => rows.map((r) => r.delivery_id).filter((id) => ids.includes(id)).sort();
      expect(mine(await repository.claimDue(1000, 1000, [], 60))).to.deep.equal([ids[0], ids[1]]);
      expect(mine(await repository.claimDue(1000, 1000, [], 60))).to.deep.equal([]);
      const [lease] = await db.query('SELECT next_attempt_at > now() + interval \'50 seconds\' AS leased FROM webhook_deliveries WHERE id = $1', [ids[0]]);
      expect(lease.leased).to.equal(true);
      // Given back (a worker stopping), they are due again at once.
      await repository.release([ids[0], ids[1]]);
      expect(mine(await repository.claimDue(1000, 1000, [], 60))).to.deep.equal([ids[0], ids[1]]);
    });

    it('takes at most `perEndpoint` of one endpoint per claim, none of an excluded endpoint, and none of a disabled one until it is enabled', async () => {
      const busy = await endpointWithDeliveries(Array.from({ length: 8 }, () => ({ status: 'pending', ageSeconds: 600 })));
      const quiet = await endpointWithDeliveries([{ status: 'pending', ageSeconds: 1 }]);
      const of = (rows: Array<{ delivery_id: string; endpoint_id: string }>, endpointId: string) => rows.filter((r) => r.endpoint_id === endpointId).length;
      const first = await repository.claimDue(1000, 3, [], 60);
      expect(of(first, busy.endpointId)).to.equal(3);
      expect(of(first, quiet.endpointId), 'a later delivery of another endpoint is not starved').to.equal(1);
      expect(of(await repository.claimDue(1000, 3, [busy.endpointId], 60), busy.endpointId)).to.equal(0);
      await db.query('UPDATE webhook_endpoints SET disabled = true WHERE id = $1', [busy.endpointId]);
      await repository.pauseOrResume([busy.endpointId]);
      expect(of(await repository.claimDue(1000, 100, [], 60), busy.endpointId)).to.equal(0);
      await db.query('UPDATE webhook_endpoints SET disabled = false WHERE id = $1', [busy.endpointId]);
      await repository.pauseOrResume([busy.endpointId]);
      // Pausing ends leases too: once enabled, every delivery still pending is due (at least once).
      expect(of(await repository.claimDue(1000, 100, [], 60), busy.endpointId)).to.equal(8);
    });

    it('two workers claiming at once never get the same delivery', async () => {
      const { ids } = await endpointWithDeliveries(Array.from({ length: 200 }, () => ({ status: 'pending', ageSeconds: 30 })));
      const claims = await Promise.all(Array.from({ length: 4 }, () => repository.claimDue(60, 1000, [], 60)));
      const claimed = claims.flat().map((r) => r.delivery_id).filter((id) => ids.includes(id));
      expect(new Set(claimed).size).to.equal(claimed.length);
    });
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
