import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partitions the history tables by UTC day of the event's `created_at` (retention drops days; ranges
 * read only theirs), copying rows in this transaction. Unique keys must hold the partition key, and
 * attempts keep no FK to deliveries: see docs/architecture.md#history-partitioned-by-day.
 */
export class HistoryPartitions1795600000000 implements MigrationInterface {
  name = 'HistoryPartitions1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE FUNCTION history_partitions_create(parent regclass, first_day date, last_day date) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        base text := (SELECT relname FROM pg_class WHERE oid = parent);
        key text := (SELECT a.attname FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
                      WHERE p.partrelid = parent);
        strays regclass := (SELECT nullif(partdefid, 0)::regclass FROM pg_partitioned_table WHERE partrelid = parent);
        day date;
        name text;
        lo timestamptz;
        hi timestamptz;
        created integer := 0;
      BEGIN
        -- One maker of a table's partitions at a time (the maintenance workers, a migration).
        PERFORM pg_advisory_xact_lock(parent::oid::bigint);
        FOR day IN SELECT generate_series(first_day, last_day, interval '1 day')::date LOOP
          name := format('%s_p%s', base, to_char(day, 'YYYYMMDD'));
          CONTINUE WHEN to_regclass(quote_ident(name)) IS NOT NULL;
          lo := day::timestamp AT TIME ZONE 'UTC';
          hi := (day + 1)::timestamp AT TIME ZONE 'UTC';
          -- Made apart and attached: ATTACH takes a lock on the parent that lets reads and
          -- writes go on, where CREATE TABLE ... PARTITION OF would stop them.
          EXECUTE format('CREATE TABLE %I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
          IF strays IS NOT NULL THEN
            -- Rows of this day that found no partition wait in the default one: they move in.
            -- Locked first, so that none arrives there between the move and the attach.
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', strays);
            EXECUTE format('WITH moved AS (DELETE FROM %s WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved', strays, key, key, name)
              USING lo, hi;
          END IF;
          EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name, lo, hi);
          created := created + 1;
        END LOOP;
        RETURN created;
      END $$`);
    await queryRunner.query(`CREATE FUNCTION history_partitions_drop(parent regclass, before timestamptz) RETURNS integer
      LANGUAGE plpgsql AS $$
      DECLARE
        key text := (SELECT a.attname FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
                      WHERE p.partrelid = parent);
        part record;
        dropped integer := 0;
      BEGIN
        PERFORM pg_advisory_xact_lock(parent::oid::bigint);
        FOR part IN SELECT c.oid::regclass AS rel, pg_get_expr(c.relpartbound, c.oid) AS bound
                      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = parent LOOP
          IF part.bound = 'DEFAULT' THEN
            EXECUTE format('DELETE FROM %s WHERE %I < $1', part.rel, key) USING before;
          ELSIF substring(part.bound FROM 'TO \\(''([^'']+)''\\)')::timestamptz <= before THEN
            EXECUTE format('DROP TABLE %s', part.rel);
            dropped := dropped + 1;
          END IF;
        END LOOP;
        RETURN dropped;
      END $$`);

    // From the oldest row (or 30 days back) to a week ahead.
    const partition = (table: string, old: string) =>
      queryRunner.query(`SELECT history_partitions_create('${table}',
          (least((SELECT min(created_at) FROM ${old}), now() - interval '30 days') AT TIME ZONE 'UTC')::date,
          (greatest((SELECT max(created_at) FROM ${old}), now() + interval '7 days') AT TIME ZONE 'UTC')::date)`);

    await queryRunner.query(`DROP TRIGGER call_events_notify ON "call_events"`);
    await queryRunner.query(`ALTER TABLE "webhook_attempts" DROP CONSTRAINT "FK_0d56d91d61b827bb2079c256538"`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c"`);
    for (const [table, indexes] of [
      ['call_events', ['call_events_unrelayed_idx', 'call_events_org_created_idx', 'call_events_call_sequence_key']],
      [
        'webhook_deliveries',
        [
          'webhook_deliveries_endpoint_created_idx',
          'webhook_deliveries_endpoint_due_idx',
          'webhook_deliveries_org_created_idx',
          'webhook_deliveries_event_endpoint_key',
        ],
      ],
      ['webhook_attempts', ['webhook_attempts_delivery_idx']],
    ] as const) {
      await queryRunner.query(`ALTER TABLE "${table}" RENAME TO "${table}_unpartitioned"`);
      for (const index of indexes) await queryRunner.query(`DROP INDEX "public"."${index}"`);
    }

    await queryRunner.query(
      `CREATE TABLE "call_events" ("id" character varying(40) NOT NULL, "call_id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "sequence" integer NOT NULL, "event" character varying(32) NOT NULL, "payload" jsonb NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "relayed_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "call_events_pkey" PRIMARY KEY ("id", "created_at")) PARTITION BY RANGE ("created_at")`,
    );
    await queryRunner.query(`CREATE INDEX "call_events_unrelayed_idx" ON "call_events" ("created_at") WHERE relayed_at IS NULL`);
    await queryRunner.query(`CREATE INDEX "call_events_org_created_idx" ON "call_events" ("org_id", "created_at", "id")`);
    await queryRunner.query(`CREATE INDEX "call_events_call_sequence_idx" ON "call_events" ("call_id", "sequence")`);
    await queryRunner.query(`CREATE TABLE "call_events_default" PARTITION OF "call_events" DEFAULT`);
    await partition('call_events', 'call_events_unpartitioned');
    await queryRunner.query(`INSERT INTO "call_events" (id, call_id, org_id, sequence, event, payload, occurred_at, created_at, relayed_at)
      SELECT id, call_id, org_id, sequence, event, payload, occurred_at, created_at, relayed_at FROM "call_events_unpartitioned"`);

    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "endpoint_id" character varying(40) NOT NULL, "event_id" character varying(40) NOT NULL, "call_id" character varying(40) NOT NULL, "event" character varying(32) NOT NULL, "sequence" integer NOT NULL, "status" character varying(16) NOT NULL, "attempt_count" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "last_response_status" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id", "created_at")) PARTITION BY RANGE ("created_at")`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_key" ON "webhook_deliveries" ("event_id", "endpoint_id", "created_at")`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_org_created_idx" ON "webhook_deliveries" ("org_id", "created_at", "id")`);
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries" ("endpoint_id", "next_attempt_at") WHERE status IN ('pending', 'retrying')`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_endpoint_created_idx" ON "webhook_deliveries" ("endpoint_id", "created_at")`);
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`CREATE TABLE "webhook_deliveries_default" PARTITION OF "webhook_deliveries" DEFAULT`);
    await partition('webhook_deliveries', 'webhook_deliveries_unpartitioned');
    // A delivery takes its event's created_at (one whose event is gone keeps its own).
    await queryRunner.query(`INSERT INTO "webhook_deliveries" (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, last_response_status, created_at, updated_at)
      SELECT d.id, d.org_id, d.endpoint_id, d.event_id, d.call_id, d.event, d.sequence, d.status, d.attempt_count, d.next_attempt_at, d.last_response_status,
             COALESCE(ev.created_at, d.created_at), d.updated_at
        FROM "webhook_deliveries_unpartitioned" d LEFT JOIN "call_events" ev ON ev.id = d.event_id`);

    await queryRunner.query(
      `CREATE TABLE "webhook_attempts" ("id" uuid NOT NULL, "delivery_id" character varying(40) NOT NULL, "delivery_created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "attempted_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "response_status" integer, "duration_ms" integer NOT NULL, "error" character varying(500), "response_body" character varying(1024), CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id", "delivery_created_at")) PARTITION BY RANGE ("delivery_created_at")`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" ("delivery_id", "attempted_at")`);
    await queryRunner.query(`CREATE TABLE "webhook_attempts_default" PARTITION OF "webhook_attempts" DEFAULT`);
    await partition('webhook_attempts', 'webhook_deliveries');
    await queryRunner.query(`INSERT INTO "webhook_attempts" (id, delivery_id, delivery_created_at, attempted_at, response_status, duration_ms, error, response_body)
      SELECT a.id, a.delivery_id, d.created_at, a.attempted_at, a.response_status, a.duration_ms, a.error, a.response_body
        FROM "webhook_attempts_unpartitioned" a JOIN "webhook_deliveries" d ON d.id = a.delivery_id`);

    await queryRunner.query(`DROP TABLE "webhook_attempts_unpartitioned", "webhook_deliveries_unpartitioned", "call_events_unpartitioned"`);
    await queryRunner.query(`CREATE TRIGGER call_events_notify AFTER INSERT ON "call_events" FOR EACH STATEMENT EXECUTE FUNCTION call_events_notify()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER call_events_notify ON "call_events"`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c"`);
    for (const table of ['call_events', 'webhook_deliveries', 'webhook_attempts']) {
      await queryRunner.query(`ALTER TABLE "${table}" RENAME TO "${table}_partitioned"`);
    }
    for (const index of [
      'call_events_unrelayed_idx',
      'call_events_org_created_idx',
      'call_events_call_sequence_idx',
      'webhook_deliveries_event_endpoint_key',
      'webhook_deliveries_org_created_idx',
      'webhook_deliveries_endpoint_due_idx',
      'webhook_deliveries_endpoint_created_idx',
      'webhook_attempts_delivery_idx',
    ]) {
      await queryRunner.query(`DROP INDEX "public"."${index}"`);
    }

    await queryRunner.query(
      `CREATE TABLE "call_events" ("id" character varying(40) NOT NULL, "call_id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "sequence" integer NOT NULL, "event" character varying(32) NOT NULL, "payload" jsonb NOT NULL, "occurred_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "relayed_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_ae7349495543762c8be7de28b7f" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `INSERT INTO "call_events" SELECT id, call_id, org_id, sequence, event, payload, occurred_at, created_at, relayed_at FROM "call_events_partitioned"`,
    );
    await queryRunner.query(`CREATE INDEX "call_events_unrelayed_idx" ON "call_events"  ("relayed_at") WHERE relayed_at IS NULL`);
    await queryRunner.query(`CREATE INDEX "call_events_org_created_idx" ON "call_events"  ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "call_events_call_sequence_key" ON "call_events"  ("call_id", "sequence") `);

    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "endpoint_id" character varying(40) NOT NULL, "event_id" character varying(40) NOT NULL, "call_id" character varying(40) NOT NULL, "event" character varying(32) NOT NULL, "sequence" integer NOT NULL, "status" character varying(16) NOT NULL, "attempt_count" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "last_response_status" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `INSERT INTO "webhook_deliveries" SELECT id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, last_response_status, created_at, updated_at FROM "webhook_deliveries_partitioned"`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_endpoint_created_idx" ON "webhook_deliveries"  ("endpoint_id", "created_at") `);
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries"  ("endpoint_id", "next_attempt_at") WHERE status IN ('pending', 'retrying')`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_org_created_idx" ON "webhook_deliveries"  ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_key" ON "webhook_deliveries"  ("event_id", "endpoint_id") `);

    await queryRunner.query(
      `CREATE TABLE "webhook_attempts" ("id" uuid NOT NULL, "delivery_id" character varying(40) NOT NULL, "attempted_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "response_status" integer, "duration_ms" integer NOT NULL, "error" character varying(500), "response_body" character varying(1024), CONSTRAINT "PK_2de7e7887ad97de459adab62638" PRIMARY KEY ("id"))`,
    );
    // Attempts of deliveries gone with their endpoint (no FK held them) are left behind.
    await queryRunner.query(`INSERT INTO "webhook_attempts" SELECT a.id, a.delivery_id, a.attempted_at, a.response_status, a.duration_ms, a.error, a.response_body
      FROM "webhook_attempts_partitioned" a WHERE EXISTS (SELECT 1 FROM "webhook_deliveries" d WHERE d.id = a.delivery_id)`);
    await queryRunner.query(`CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts"  ("delivery_id", "attempted_at") `);

    await queryRunner.query(`DROP TABLE "webhook_attempts_partitioned", "webhook_deliveries_partitioned", "call_events_partitioned"`);
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_attempts" ADD CONSTRAINT "FK_0d56d91d61b827bb2079c256538" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`CREATE TRIGGER call_events_notify AFTER INSERT ON "call_events" FOR EACH STATEMENT EXECUTE FUNCTION call_events_notify()`);
    await queryRunner.query(`DROP FUNCTION history_partitions_drop(regclass, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION history_partitions_create(regclass, date, date)`);
  }
}
