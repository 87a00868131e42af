import { expect } from 'chai';
import request from 'supertest';
import { retainedHistory } from '../../src/history/history-partitions.js';
import { db } from '../helpers/db.js';
import { createPool } from '../../src/lib/db.js';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository.js';
import { app, bearer, createOrg } from '../helpers/api.js';

async function endpointWithDeliveries(rows: Array<{ status: string; ageSeconds: number }>) {
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
  // As the relay makes them: a delivery's created_at is its event's.
  await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
     SELECT r.id, $1, $2, ev.id, 'call_x', 'call.completed', 4, status, 0, now() - make_interval(secs => age), ev.created_at
       FROM unnest($3::varchar[], $4::varchar[], $5::int[]) AS r(id, status, age) JOIN call_events ev ON ev.id = 'evt_' || r.id`,
    [org.id, endpoint.body.id, ids, rows.map((r) => r.status), rows.map((r) => r.ageSeconds)],
  );
  return { endpointId: endpoint.body.id as string, ids };
}

describe('webhook maintenance', () => {
  describe('claiming due deliveries (Postgres is the delivery queue)', () => {
    const pool = createPool(4);
    const repository = new WebhookDeliveryRepository(pool);
    const retained = () => retainedHistory('webhook_deliveries');
    after(() => pool.end());

    it('claims only due deliveries of enabled endpoints, and leases them: a second claim gets none of them', async () => {
      const { endpointId, ids } = await endpointWithDeliveries([
        { status: 'pending', ageSeconds: 60 },
        { status: 'retrying', ageSeconds: 60 },
        { status: 'retrying', ageSeconds: -3600 }, // not due yet
        { status: 'succeeded', ageSeconds: 60 },
        { status: 'failed', ageSeconds: 60 },
      ]);
      const claim = async () => (await repository.claimDue([{ endpointId, quota: 1000 }], 60, retained())).map((r) => r.delivery_id).sort();
      expect(await claim()).to.deep.equal([ids[0], ids[1]].sort());
      expect(await claim()).to.deep.equal([]);
      const [lease] = await db.query('SELECT next_attempt_at > now() + interval \'50 seconds\' AS leased FROM webhook_deliveries WHERE id = $1', [ids[0]]);
      expect(lease.leased).to.equal(true);
      // Given back (a worker stopping), they are due again at once.
      const [{ created_at }] = await db.query('SELECT created_at FROM webhook_deliveries WHERE id = $1', [ids[0]]);
      await repository.release([ids[0], ids[1]].map((id) => ({ delivery_id: id, created_at })));
      expect(await claim()).to.deep.equal([ids[0], ids[1]].sort());
    });

    it('takes at most each endpoint’s quota, oldest due first, and none of a disabled endpoint until it is enabled', async () => {
      const busy = await endpointWithDeliveries(Array.from({ length: 8 }, (_, i) => ({ status: 'pending', ageSeconds: 600 - i })));
      const claim = (quota: number) => repository.claimDue([{ endpointId: busy.endpointId, quota }], 60, retained());
      expect((await claim(3)).map((r) => r.delivery_id)).to.deep.equal(busy.ids.slice(0, 3));
      await db.query('UPDATE webhook_endpoints SET disabled = true WHERE id = $1', [busy.endpointId]);
      await repository.pauseOrResume([busy.endpointId]);
      expect(await claim(100)).to.deep.equal([]);
      await db.query('UPDATE webhook_endpoints SET disabled = false WHERE id = $1', [busy.endpointId]);
      await repository.pauseOrResume([busy.endpointId]);
      // Pausing ends leases too: once enabled, every delivery still pending is due (at least once).
      expect(await claim(100)).to.have.lengthOf(8);
    });

    it('the endpoint scan finds every endpoint with open deliveries, one probe each, in pages', async () => {
      const open = await endpointWithDeliveries([{ status: 'retrying', ageSeconds: -60 }]);
      const done = await endpointWithDeliveries([{ status: 'succeeded', ageSeconds: 60 }, { status: 'failed', ageSeconds: 60 }]);
      const all: string[] = [];
      for (let after = ''; ; ) {
        const page = await repository.openEndpoints(after, 2, retained());
        all.push(...page);
        if (page.length < 2) break;
        after = page[page.length - 1];
      }
      expect(all).to.include(open.endpointId);
      expect(all).to.not.include(done.endpointId);
      expect([...all].sort()).to.deep.equal(all);
    });

    it('two workers claiming at once never get the same delivery', async () => {
      const { endpointId, ids } = await endpointWithDeliveries(Array.from({ length: 200 }, () => ({ status: 'pending', ageSeconds: 30 })));
      const claims = await Promise.all(Array.from({ length: 4 }, () => repository.claimDue([{ endpointId, quota: 60 }], 60, retained())));
      const claimed = claims.flat().map((r) => r.delivery_id);
      expect(claimed.every((id) => ids.includes(id))).to.equal(true);
      expect(new Set(claimed).size).to.equal(claimed.length);
      expect(claimed.length).to.be.above(60);
    });
  });
});
