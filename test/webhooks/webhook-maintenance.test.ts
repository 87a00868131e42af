import { expect } from 'chai';
import request from 'supertest';
import { retainedHistory } from '../../src/history/history-partitions.js';
import { db } from '../helpers/db.js';
import { createPool } from '../../src/lib/db.js';
import { DeliveryClaimsRepository } from '../../src/webhooks/delivery-claims.repository.js';
import { pauseOrResume } from '../../src/webhooks/delivery-log.repository.js';
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
    `INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, relayed_at)
     SELECT 'evt_' || id, 'call_' || id, $1, $1, 4, 'call.completed', '{"event": "call.completed"}', now(), now() FROM unnest($2::varchar[]) AS id`,
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
    const repository = new DeliveryClaimsRepository(pool);
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
      const [lease] = await db.query("SELECT next_attempt_at > now() + interval '50 seconds' AS leased FROM webhook_deliveries WHERE id = $1", [ids[0]]);
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
      await pauseOrResume(pool, [busy.endpointId]);
      expect(await claim(100)).to.deep.equal([]);
      await db.query('UPDATE webhook_endpoints SET disabled = false WHERE id = $1', [busy.endpointId]);
      await pauseOrResume(pool, [busy.endpointId]);
      // Pausing ends leases too: once enabled, every delivery still pending is due (at least once).
      expect(await claim(100)).to.have.lengthOf(8);
    });

    it('the endpoint scan finds every endpoint with open deliveries, one probe each, in pages', async () => {
      const open = await endpointWithDeliveries([{ status: 'retrying', ageSeconds: -60 }]);
      const done = await endpointWithDeliveries([
        { status: 'succeeded', ageSeconds: 60 },
        { status: 'failed', ageSeconds: 60 },
      ]);
      const all: string[] = [];
      for (let after = ''; ;) {
        const page = await repository.openEndpoints(after, 2, retained());
        all.push(...page.map((e) => e.id));
        if (page.length < 2) break;
        after = page[page.length - 1].id;
      }
      expect(all).to.include(open.endpointId);
      expect(all).to.not.include(done.endpointId);
      expect([...all].sort()).to.deep.equal(all);
    });

    describe('pacing a rate-limited endpoint (rate_limit_per_second)', () => {
      /** An endpoint with `n` due deliveries, limited to `rate` per second, its pace set to start `pacedIn` from now (SQL interval). */
      async function pacedEndpoint(n: number, rate: number | null, pacedIn: string | null) {
        const made = await endpointWithDeliveries(Array.from({ length: n }, (_, i) => ({ status: 'pending', ageSeconds: 600 - i })));
        await db.query(`UPDATE webhook_endpoints SET rate_limit_per_second = $2, paced_until = now() + $3::interval WHERE id = $1`, [
          made.endpointId,
          rate,
          pacedIn,
        ]);
        return made;
      }
      const pacedUntil = async (id: string): Promise<string | null> =>
        (await db.query(`SELECT to_char(paced_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS t FROM webhook_endpoints WHERE id = $1`, [id]))[0].t;
      /** `t` (as `pacedUntil` gives it) plus `ms`, to the microsecond. */
      const plus = async (t: string, ms: number): Promise<string> =>
        (await db.query(`SELECT to_char($1::timestamp + make_interval(secs => $2::float8 / 1000), 'YYYY-MM-DD HH24:MI:SS.US') AS t`, [t, ms]))[0].t;
      const claimSorted = async (endpointId: string, quota: number) =>
        (await repository.claimPaced([{ endpointId, quota }], 60, retained())).sort((a, b) => a.wait_ms! - b.wait_ms!);
      /**
       * The gaps between successive slots, in ms. Each slot's wait is measured as its row is
       * produced (clock_timestamp()), so a later row's is measured a little later: a gap is the
       * slot spacing less the time between the two rows (a few ms on a loaded machine; 248 seen),
       * never more than the spacing (+1 for the rounding up).
       */
      const gaps = (claimed: Array<{ wait_ms?: number | null }>) => claimed.slice(1).map((r, i) => r.wait_ms! - claimed[i].wait_ms!);

      it('hands out send slots 1.05/rate apart from paced_until, only those starting within the horizon, oldest due first, and moves paced_until past the last', async () => {
        const { endpointId, ids } = await pacedEndpoint(10, 4, '600 milliseconds');
        const start = (await pacedUntil(endpointId))!;
        const claimed = await claimSorted(endpointId, 100);
        // At 4/s, slots 262.5 ms apart: +600 and +862.5 ms start within PACE_HORIZON_SECONDS (1 s); +1125 does not.
        expect(claimed.map((r) => r.delivery_id)).to.deep.equal(ids.slice(0, 2));
        expect(claimed[0].wait_ms).to.be.within(450, 600);
        expect(gaps(claimed)[0]).to.be.within(243, 264);
        expect(await pacedUntil(endpointId)).to.equal(await plus(start, 525));
      });

      it('starts from now when paced_until has passed; a quota smaller than the slots moves it only past the slots taken; nothing due moves nothing', async () => {
        const { endpointId, ids } = await pacedEndpoint(5, 4, '-10 seconds');
        const claimed = await claimSorted(endpointId, 100);
        expect(claimed.map((r) => r.delivery_id)).to.deep.equal(ids.slice(0, 4));
        // The first slot began when the claim did: by its end, it is a few ms old.
        expect(claimed[0].wait_ms).to.be.within(-50, 1);
        // Slots at +0, +262.5, +525 and +787.5 ms; +1050 is past the horizon.
        for (const gap of gaps(claimed)) expect(gap).to.be.within(243, 264);
        const small = await pacedEndpoint(5, 4, '200 milliseconds');
        const start = (await pacedUntil(small.endpointId))!;
        expect((await claimSorted(small.endpointId, 1)).map((r) => r.delivery_id)).to.deep.equal([small.ids[0]]);
        expect(await pacedUntil(small.endpointId)).to.equal(await plus(start, 262.5));
        const none = await pacedEndpoint(0, 4, '200 milliseconds');
        const unchanged = await pacedUntil(none.endpointId);
        expect(await claimSorted(none.endpointId, 100)).to.deep.equal([]);
        expect(await pacedUntil(none.endpointId)).to.equal(unchanged);
      });

      it('claims an endpoint with a limit only through claimPaced, and one without only through claimDue, whose rows it neither locks nor writes', async () => {
        const free = await pacedEndpoint(3, null, null);
        const paced = await pacedEndpoint(3, 4, null);
        const both = [
          { endpointId: free.endpointId, quota: 10 },
          { endpointId: paced.endpointId, quota: 10 },
        ];
        const holder = db.createQueryRunner();
        await holder.connect();
        try {
          await holder.startTransaction();
          await holder.query('SELECT 1 FROM webhook_endpoints WHERE id = ANY($1) FOR UPDATE', [[free.endpointId, paced.endpointId]]);
          // While another transaction holds both rows, the limited one is skipped (its pace is
          // being moved elsewhere); the other is claimed as ever.
          expect(await repository.claimPaced(both, 60, retained())).to.deep.equal([]);
          const claimed = await repository.claimDue(both, 60, retained());
          expect(claimed.map((r) => r.delivery_id).sort()).to.deep.equal([...free.ids].sort());
          expect(claimed.map((r) => r.wait_ms)).to.deep.equal([null, null, null]);
        } finally {
          await holder.rollbackTransaction();
          await holder.release();
        }
        expect(await pacedUntil(free.endpointId)).to.equal(null);
        expect((await repository.claimPaced(both, 60, retained())).map((r) => r.delivery_id).sort()).to.deep.equal([...paced.ids].sort());
      });

      it('the endpoint scan says which endpoints have a limit', async () => {
        const free = await pacedEndpoint(1, null, null);
        const paced = await pacedEndpoint(1, 7, null);
        const found = await repository.openEndpoints('', 1000, retained());
        expect(found.filter((e) => [free.endpointId, paced.endpointId].includes(e.id))).to.have.deep.members([
          { id: free.endpointId, paced: false },
          { id: paced.endpointId, paced: true },
        ]);
      });

      it('claims running at once never hand out one slot twice: paced_until moves by exactly one slot per delivery taken', async () => {
        const { endpointId, ids } = await pacedEndpoint(200, 50, '200 milliseconds');
        const start = (await pacedUntil(endpointId))!;
        const claims = await Promise.all(Array.from({ length: 4 }, () => repository.claimPaced([{ endpointId, quota: 30 }], 60, retained())));
        const claimed = claims.flat().map((r) => r.delivery_id);
        expect(new Set(claimed).size).to.equal(claimed.length);
        expect(claimed.every((id) => ids.includes(id))).to.equal(true);
        // The horizon: slots 21 ms apart from +200 ms up to +1 s (39 of them), and a few more as time passes.
        expect(claimed.length).to.be.within(30, 45);
        expect(await pacedUntil(endpointId)).to.equal(await plus(start, claimed.length * 21));
      });
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
