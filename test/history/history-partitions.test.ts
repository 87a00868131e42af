// History partitioned by UTC day: every hot statement reads only the days it needs (checked on the
// executed plans), retention drops whole days, a row never fails for want of a partition, and the
// upgrade from the unpartitioned tables keeps every row.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { Actor } from '../../src/auth/actor.js';
import { HistoryMaintenance, retainedEvents, retainedHistory } from '../../src/history/history-partitions.js';
import { HistoryRepository } from '../../src/history/history.repository.js';
import { exactly } from '../../src/history/history-range.js';
import { db } from '../helpers/db.js';
import { HistoryPartitions1795600000000 } from '../../src/migrations/1795600000000-HistoryPartitions.js';
import { createRelay, createRuntime, type Runtime } from '../../src/runtime.js';
import { AttemptsRepository, type RecordedAttempt } from '../../src/webhooks/attempts.repository.js';
import { DeliveryClaimsRepository } from '../../src/webhooks/delivery-claims.repository.js';
import type { DeliverJob } from '../../src/jobs.js';
import { asCaller, createOrg, expectStatus } from '../helpers/api.js';
import { QueryPlans, tablesRead, type PlanNode } from '../helpers/query-plans.js';
import { redisForTests } from '../helpers/redis.js';
import { withUpgrade } from '../helpers/upgrade.js';

const DAY = 86_400_000;
const HISTORY = ['call_events', 'webhook_deliveries', 'webhook_attempts'] as const;
type HistoryTable = (typeof HISTORY)[number];

/** A partition's name: its table and UTC day (the HistoryPartitions migration's convention). */
const partition = (table: HistoryTable, at: Date) => `${table}_p${at.toISOString().slice(0, 10).replaceAll('-', '')}`;

/** The partitions of `table` for every UTC day from `from` to `to`. */
function days(table: HistoryTable, from: Date, to: Date): string[] {
  const names: string[] = [];
  for (let t = Math.floor(from.getTime() / DAY) * DAY; t <= to.getTime(); t += DAY) names.push(partition(table, new Date(t)));
  return names;
}

/** The history partitions (of `table`) a plan read: each must be one of `allowed`. */
function expectReads(plan: PlanNode, table: HistoryTable, allowed: string[], mustRead: string[] = []): void {
  const read = tablesRead(plan).filter((t) => t.startsWith(`${table}_`));
  expect(read, `${table}: read ${read.join(', ')}; allowed ${allowed.join(', ')}`).to.satisfy((r: string[]) => r.every((t) => allowed.includes(t)));
  expect(read).to.include.members(mustRead);
}

interface Seeded {
  eventId: string;
  deliveryId: string | null;
  at: Date;
}

/**
 * History of `orgId`'s endpoint as the relay and the dispatcher leave it: an event at `at`,
 * and unless `delivery` is null its delivery (with its event's created_at) and one attempt.
 */
async function seed(orgId: string, endpointId: string, at: Date, delivery: { status: string; due?: boolean } | null): Promise<Seeded> {
  const eventId = `evt_hist${randomUUID().slice(0, 8)}`;
  await db.query(
    `INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, created_at, relayed_at)
     VALUES ($1, 'call_hist', $2, $2, 4, 'call.completed', '{"event": "call.completed", "call_id": "call_hist"}', $3, $3, $4)`,
    [eventId, orgId, at, delivery ? at : null],
  );
  if (!delivery) return { eventId, deliveryId: null, at };
  const deliveryId = `dlv_hist${randomUUID().slice(0, 8)}`;
  await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, 'call_hist', 'call.completed', 4, $5, 1, $6, $7)`,
    [deliveryId, orgId, endpointId, eventId, delivery.status, delivery.due ? new Date(Date.now() - 60_000) : null, at],
  );
  await db.query(
    `INSERT INTO webhook_attempts (id, delivery_id, delivery_created_at, attempted_at, response_status, duration_ms) VALUES ($1, $2, $3, $3, 503, 5)`,
    [randomUUID(), deliveryId, at],
  );
  return { eventId, deliveryId, at };
}

describe('history partitions', () => {
  describe('every hot statement reads only the days (partitions) it needs', () => {
    const plans = new QueryPlans();
    let dataSource: DataSource;
    /** The services over the connections that record plans. */
    let runtime: Runtime;
    let pool: pg.Pool;
    let orgId: string;
    let endpointId: string;
    let actor: Actor;
    const now = new Date();
    const ago = (d: number) => new Date(now.getTime() - d * DAY - 60_000);
    const soon = new Date(now.getTime() + 3_600_000);
    let old: Seeded;
    let failed: Seeded;
    let retrying: Seeded;

    before(async () => {
      dataSource = await plans.dataSource();
      pool = plans.pool();
      runtime = createRuntime({ db: dataSource, redis: redisForTests() });
      const org = await createOrg({ name: 'History' });
      orgId = org.id;
      const member = { id: orgId, parentId: null, isReseller: false, disabled: false };
      actor = { via: 'api_key', keyId: org.keyId, credentialId: org.keyId, memberId: org.memberId, capabilities: ['webhooks'], ownerOrg: member, org: member };
      const res = await asCaller(org.key).post('/v1/webhook-endpoints', {
        name: 'History',
        url: 'http://127.0.0.1:9/hooks',
        secret: 'a-secret-value',
        outcomes: [],
      });
      endpointId = expectStatus(res, 201).body.id;
      old = await seed(orgId, endpointId, ago(10), { status: 'succeeded' });
      failed = await seed(orgId, endpointId, ago(5), { status: 'failed' });
      retrying = await seed(orgId, endpointId, ago(2), { status: 'retrying', due: true });
      await seed(orgId, endpointId, ago(2), null);
      for (let i = 0; i < 3; i++) await seed(orgId, endpointId, new Date(now.getTime() - 60_000 + i), null);
    });
    after(async () => {
      await dataSource.destroy();
      await pool.end();
      await runtime.close();
    });

    it('the relay: from the oldest event not relayed to now, then the days of its batch', async () => {
      expect(await createRelay(dataSource).batch()).to.be.at.least(4);
      expectReads(plans.last('WHERE relayed_at IS NULL AND created_at >='), 'call_events', days('call_events', ago(2), soon), [
        partition('call_events', ago(2)),
      ]);
      for (const statement of [
        'JOIN webhook_endpoints w ON w.org_id IN (ev.org_id, ev.account_id)',
        'INSERT INTO webhook_deliveries',
        'UPDATE call_events SET relayed_at',
      ]) {
        expectReads(plans.last(statement), 'call_events', days('call_events', ago(2), now));
      }
      // Each new delivery has its event's created_at, so the day of both is one.
      const made = await db.query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE d.created_at = ev.created_at)::int AS same
           FROM webhook_deliveries d JOIN call_events ev ON ev.id = d.event_id WHERE d.endpoint_id = $1 AND d.status = 'pending'`,
        [endpointId],
      );
      expect(made).to.deep.equal([{ n: 4, same: 4 }]);
    });

    it('an event relayed again (its relayed_at lost) makes no second delivery: (event, endpoint, its created_at) is unique', async () => {
      await db.query(`UPDATE call_events SET relayed_at = NULL WHERE org_id = $1 AND created_at > $2`, [orgId, ago(1)]);
      await createRelay(dataSource).batch();
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND created_at > $2`, [endpointId, ago(1)]);
      expect(n).to.equal(3);
    });

    it('the dispatcher: open deliveries from their first day on, each event from its own day; recording from the days of its batch', async () => {
      const repository = new DeliveryClaimsRepository(pool);
      const open = await repository.openRange(retainedHistory('webhook_deliveries'));
      expect(open.from.getTime()).to.equal(Math.floor(retrying.at.getTime() / DAY) * DAY);
      const targets = await repository.claimDue([{ endpointId, quota: 100 }], 60, open);
      expect(targets).to.have.lengthOf(5);
      const claim = plans.last('FOR UPDATE OF d SKIP LOCKED');
      expectReads(claim, 'webhook_deliveries', days('webhook_deliveries', ago(2), soon), [partition('webhook_deliveries', ago(2))]);
      expectReads(claim, 'call_events', days('call_events', ago(2), now), [partition('call_events', ago(2))]);

      const attempts: RecordedAttempt[] = targets.map((t) => ({
        deliveryId: t.delivery_id,
        deliveryCreatedAt: t.created_at,
        endpointId,
        attemptId: randomUUID(),
        attemptedAt: new Date(),
        responseStatus: 200,
        durationMs: 5,
        error: null,
        responseBody: null,
        status: 'succeeded',
        nextAttemptAt: null,
        endpointGone: false,
      }));
      await new AttemptsRepository(pool).record(attempts, 120);
      expectReads(plans.last('INSERT INTO webhook_attempts'), 'webhook_deliveries', days('webhook_deliveries', ago(2), now));
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY($1)`, [targets.map((t) => t.delivery_id)]);
      expect(n).to.equal(5 + 1); // the retrying one had an attempt already
    });

    it('the delivery log: a page reads from the newest day until it is full, and each delivery’s attempts from its day', async () => {
      const service = runtime.services.webhookDeliveries;
      const first = await service.list(actor, { limit: 2 });
      expect(first.data).to.have.lengthOf(2);
      let plan = plans.last('FROM webhook_deliveries d WHERE d.org_id');
      expectReads(plan, 'webhook_deliveries', days('webhook_deliveries', ago(0), soon));
      expectReads(plan, 'webhook_attempts', days('webhook_attempts', ago(0), now));

      const second = await service.list(actor, { limit: 2, cursor: first.next_cursor! });
      expect(second.data.map((d) => d.created_at)).to.include(retrying.at.toISOString());
      plan = plans.last('FROM webhook_deliveries d WHERE d.org_id');
      expectReads(plan, 'webhook_deliveries', days('webhook_deliveries', ago(2), now), [partition('webhook_deliveries', ago(2))]);
    });

    it('a delivery by id: one probe per retained day; its support retry carries its created_at and reads only its day', async () => {
      const service = runtime.services.webhookDeliveries;
      await service.get(actor, old.deliveryId!);
      const plan = plans.last('FROM webhook_deliveries d WHERE d.id = $1');
      const retained = retainedHistory('webhook_deliveries', now.getTime());
      expectReads(plan, 'webhook_deliveries', days('webhook_deliveries', retained.from, retained.to), [partition('webhook_deliveries', old.at)]);
      expectReads(plan, 'webhook_attempts', [partition('webhook_attempts', old.at)]);

      await service.retry(actor, old.deliveryId!);
      const waiting = await runtime.queues.webhooks.queue.getJobs(['waiting']);
      const job = waiting.find((j) => (j.data as DeliverJob).deliveryId === old.deliveryId)!;
      await job.remove();
      expect((job.data as DeliverJob).createdAt).to.equal(old.at.toISOString());
      const target = await new DeliveryClaimsRepository(pool).findTarget(old.deliveryId!, exactly(new Date(job.data.createdAt)));
      expect(target?.status).to.equal('succeeded');
      const find = plans.last('d.status, d.event');
      expectReads(find, 'webhook_deliveries', [partition('webhook_deliveries', old.at)], [partition('webhook_deliveries', old.at)]);
      expectReads(find, 'call_events', [partition('call_events', old.at)], [partition('call_events', old.at)]);
    });

    it('the events feed: a page reads from the newest day until it is full; a time filter only its days; an event by id, one probe per retained day', async () => {
      const service = runtime.services.events;
      const first = await service.list(actor, { limit: 2 });
      expect(first.data).to.have.lengthOf(2);
      expectReads(plans.last('FROM call_events ev WHERE ev.org_id'), 'call_events', days('call_events', ago(0), soon));

      const between = await service.list(actor, { limit: 100, created_after: ago(6), created_before: ago(4) });
      expect(between.data.map((e) => e.id)).to.deep.equal([failed.eventId]);
      expectReads(plans.last('FROM call_events ev WHERE ev.org_id'), 'call_events', days('call_events', ago(6), ago(4)), [partition('call_events', failed.at)]);

      expect((await service.get(actor, old.eventId)).id).to.equal(old.eventId);
      const retained = retainedEvents(now.getTime());
      expectReads(plans.last('FROM call_events ev WHERE ev.id = $1'), 'call_events', days('call_events', retained.from, retained.to), [
        partition('call_events', old.at),
      ]);
    });

    it('recover: only the days since it was asked for', async () => {
      expect(await runtime.services.webhookDeliveries.retryFailed({ endpointId, since: ago(3) })).to.equal(0);
      expectReads(plans.last(`SET status = 'retrying'`), 'webhook_deliveries', days('webhook_deliveries', ago(3), soon));
      const [{ status }] = await db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [failed.deliveryId]);
      expect(status).to.equal('failed');
    });
  });

  describe('upkeep by the maintenance worker', () => {
    const history = new HistoryMaintenance(new HistoryRepository(db));
    const exists = async (name: string) => (await db.query('SELECT to_regclass($1) IS NOT NULL AS found', [name]))[0].found as boolean;
    const partitionOf = async (table: HistoryTable, column: string, id: string) =>
      (await db.query(`SELECT tableoid::regclass::text AS name FROM ${table} WHERE ${column} = $1`, [id]))[0]?.name as string | undefined;

    it('drops the days past WEBHOOK_RETENTION_DAYS (30) whole, events with them, and deletes older rows from the default partitions', async () => {
      const org = await createOrg({ name: 'Retention' });
      const res = await asCaller(org.key).post('/v1/webhook-endpoints', { name: 'R', url: 'http://127.0.0.1:9/hooks', secret: 'a-secret-value', outcomes: [] });
      const endpointId = expectStatus(res, 201).body.id;
      const at = (d: number) => new Date(Date.now() - d * DAY);
      // A day 40 days back has a partition (as a day of history ages past retention); 31 days
      // back has none in a new database: those rows wait in the default partitions.
      for (const table of HISTORY) await db.query(`SELECT history_partitions_create($1, $2::date, $2::date)`, [table, at(40).toISOString().slice(0, 10)]);
      const gone = [await seed(org.id, endpointId, at(40), { status: 'succeeded' }), await seed(org.id, endpointId, at(31), { status: 'failed' })];
      const kept = await seed(org.id, endpointId, at(29), { status: 'succeeded' });
      expect(await partitionOf('webhook_deliveries', 'id', gone[0].deliveryId!)).to.equal(partition('webhook_deliveries', at(40)));
      expect(await partitionOf('webhook_deliveries', 'id', gone[1].deliveryId!)).to.equal('webhook_deliveries_default');

      const done = await history.maintain();
      for (const table of HISTORY) {
        expect(done[table].dropped, table).to.be.at.least(1);
        expect(await exists(partition(table, at(40))), table).to.equal(false);
      }
      for (const { eventId, deliveryId } of gone) {
        expect(await partitionOf('call_events', 'id', eventId)).to.equal(undefined);
        expect(await partitionOf('webhook_deliveries', 'id', deliveryId!)).to.equal(undefined);
        expect(await partitionOf('webhook_attempts', 'delivery_id', deliveryId!)).to.equal(undefined);
      }
      expect(await partitionOf('call_events', 'id', kept.eventId)).to.equal(partition('call_events', at(29)));
      expect(await partitionOf('webhook_attempts', 'delivery_id', kept.deliveryId!)).to.equal(partition('webhook_attempts', at(29)));
    });

    it('makes the days ahead; a row of a day without its partition (the worker stopped too long) is stored, and moves in when the day is made', async () => {
      const ahead = new Date(Date.now() + 7 * DAY);
      for (const table of HISTORY) expect(await exists(partition(table, ahead)), table).to.equal(true);
      await db.query(`DROP TABLE ${partition('call_events', ahead)}`);
      const eventId = `evt_ahead${randomUUID().slice(0, 8)}`;
      await db.query(
        `INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, created_at, relayed_at)
         VALUES ($1, 'call_ahead', 'org_ahead', 'org_ahead', 1, 'call.queued', '{}', $2, $2, $2)`,
        [eventId, ahead],
      );
      expect(await partitionOf('call_events', 'id', eventId)).to.equal('call_events_default');
      expect((await history.maintain()).call_events.created).to.equal(1);
      expect(await partitionOf('call_events', 'id', eventId)).to.equal(partition('call_events', ahead));
    });
  });

  it('the upgrade from unpartitioned tables keeps every row, each in its day; down restores them', async function () {
    this.timeout(60_000);
    await withUpgrade('upgrade', HistoryPartitions1795600000000, async ({ before, upgraded }) => {
      const ages = [45, 3, 0];
      await before.query(`INSERT INTO organizations (id, name) VALUES ('org_up', 'Upgrade')`);
      await before.query(
        `INSERT INTO webhook_endpoints (id, org_id, name, url, secret) VALUES ('whe_up', 'org_up', 'E', 'http://127.0.0.1:9/', 'a-secret-value')`,
      );
      await before.query(
        `INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at, created_at, relayed_at)
         SELECT 'evt_up' || age, 'call_up' || age, 'org_up', 1, 'call.queued', '{}', t, t, t + interval '2 seconds'
           FROM unnest($1::int[]) AS age, LATERAL (SELECT now() - make_interval(days => age) AS t) times`,
        [ages],
      );
      // Deliveries made by the old relay, two seconds after their event; one whose event is gone.
      await before.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, created_at)
         SELECT 'dlv_up' || ev.call_id, 'org_up', 'whe_up', ev.id, ev.call_id, 'call.queued', 1, 'succeeded', ev.created_at + interval '2 seconds' FROM call_events ev
         UNION ALL SELECT 'dlv_up_orphan', 'org_up', 'whe_up', 'evt_gone', 'call_gone', 'call.queued', 1, 'failed', now() - interval '1 day'`,
      );
      await before.query(
        `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, duration_ms) SELECT gen_random_uuid(), id, created_at, 5 FROM webhook_deliveries, generate_series(1, 2)`,
      );

      await upgraded.runMigrations({ transaction: 'each' });
      const counts = async (ds: DataSource) =>
        (
          await ds.query(
            `SELECT (SELECT count(*) FROM call_events)::int AS events, (SELECT count(*) FROM webhook_deliveries)::int AS deliveries, (SELECT count(*) FROM webhook_attempts)::int AS attempts`,
          )
        )[0];
      expect(await counts(upgraded)).to.deep.equal({ events: 3, deliveries: 4, attempts: 8 });
      const placed: Array<{ id: string; partition: string; as_event: boolean | null; attempts_with_it: boolean }> = await upgraded.query(
        `SELECT d.id, d.tableoid::regclass::text AS partition, d.created_at = ev.created_at AS as_event,
                (SELECT bool_and(a.delivery_created_at = d.created_at AND a.tableoid::regclass::text = replace(d.tableoid::regclass::text, 'deliveries', 'attempts'))
                   FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts_with_it
           FROM webhook_deliveries d LEFT JOIN call_events ev ON ev.id = d.event_id`,
      );
      // Each delivery takes its event's created_at (the orphan keeps its own); its attempts are in the same day.
      const day = (d: number) => partition('webhook_deliveries', new Date(Date.now() - d * DAY));
      expect(placed.map((p) => [p.id, p.partition, p.as_event, p.attempts_with_it]).sort()).to.deep.equal([
        ['dlv_up_orphan', day(1), null, true],
        ['dlv_upcall_up0', day(0), true, true],
        ['dlv_upcall_up3', day(3), true, true],
        ['dlv_upcall_up45', day(45), true, true],
      ]);
      expect((await upgraded.query(`SELECT count(*)::int AS n FROM ONLY call_events_default`))[0].n).to.equal(0);

      await upgraded.undoLastMigration({ transaction: 'each' });
      expect(await counts(upgraded)).to.deep.equal({ events: 3, deliveries: 4, attempts: 8 });
      const kinds = await upgraded.query(
        `SELECT relname, relkind FROM pg_class WHERE relname IN ('call_events', 'webhook_deliveries', 'webhook_attempts') ORDER BY 1`,
      );
      expect(kinds.map((k: any) => k.relkind)).to.deep.equal(['r', 'r', 'r']);
    });
  });
});
