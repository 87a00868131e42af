import { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1795370287462 implements MigrationInterface {
  name = 'Webhooks1795370287462';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhook_endpoints" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(200) NOT NULL, "url" character varying(2048) NOT NULL, "secret" character varying(512) NOT NULL, "outcomes" text array NOT NULL DEFAULT '{}', "field_aliases" jsonb NOT NULL DEFAULT '{}', "extra_payload" jsonb NOT NULL DEFAULT '{}', "custom_headers" jsonb NOT NULL DEFAULT '{}', "disabled" boolean NOT NULL DEFAULT false, "failing_since" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_054c4cfb95223732f5939d2d546" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_endpoints_org_created_idx" ON "webhook_endpoints"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "endpoint_id" character varying(40) NOT NULL, "event_id" character varying(40) NOT NULL, "call_id" character varying(40) NOT NULL, "event" character varying(32) NOT NULL, "sequence" integer NOT NULL, "status" character varying(16) NOT NULL, "attempt_count" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP(3) WITH TIME ZONE, "last_response_status" integer, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_endpoint_created_idx" ON "webhook_deliveries"  ("endpoint_id", "created_at") `);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"  ("next_attempt_at") WHERE status IN ('pending', 'retrying')`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_org_created_idx" ON "webhook_deliveries"  ("org_id", "created_at", "id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_key" ON "webhook_deliveries"  ("event_id", "endpoint_id") `);
    await queryRunner.query(
      `CREATE TABLE "webhook_attempts" ("id" uuid NOT NULL, "delivery_id" character varying(40) NOT NULL, "attempted_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "response_status" integer, "duration_ms" integer NOT NULL, "error" character varying(500), "response_body" character varying(1024), CONSTRAINT "PK_2de7e7887ad97de459adab62638" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts"  ("delivery_id", "attempted_at") `);
    await queryRunner.query(
      `ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "FK_c16c2418978f22136bd60cff196" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_attempts" ADD CONSTRAINT "FK_0d56d91d61b827bb2079c256538" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );

    // Wakes the relay as an event commits (it also polls: a missed notification only delays).
    await queryRunner.query(`CREATE FUNCTION call_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('call_events', ''); RETURN NULL; END $$`);
    await queryRunner.query(`CREATE TRIGGER call_events_notify AFTER INSERT ON "call_events"
            FOR EACH STATEMENT EXECUTE FUNCTION call_events_notify()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER call_events_notify ON "call_events"`);
    await queryRunner.query(`DROP FUNCTION call_events_notify()`);
    await queryRunner.query(`ALTER TABLE "webhook_attempts" DROP CONSTRAINT "FK_0d56d91d61b827bb2079c256538"`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "FK_c16c2418978f22136bd60cff196"`);
    await queryRunner.query(`DROP INDEX "public"."webhook_attempts_delivery_idx"`);
    await queryRunner.query(`DROP TABLE "webhook_attempts"`);
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_event_endpoint_key"`);
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_due_idx"`);
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_endpoint_created_idx"`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP INDEX "public"."webhook_endpoints_org_created_idx"`);
    await queryRunner.query(`DROP TABLE "webhook_endpoints"`);
  }
}
