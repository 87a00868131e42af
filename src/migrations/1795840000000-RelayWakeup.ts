import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events notify the relay only while it waits for them (docs/architecture.md#webhook-delivery). A
 * transaction that sent a NOTIFY holds Postgres's one notification-queue lock through its commit,
 * so with every event-writing transaction notifying, the platform's commits went one at a time.
 * `relay_wakeup.asleep`: a relay waits for a NOTIFY (true until a relay says it is busy).
 */
export class RelayWakeup1795840000000 implements MigrationInterface {
  name = 'RelayWakeup1795840000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "relay_wakeup" ("id" integer PRIMARY KEY DEFAULT 1 CHECK ("id" = 1), "asleep" boolean NOT NULL)`);
    await queryRunner.query(`INSERT INTO "relay_wakeup" ("id", "asleep") VALUES (1, true)`);
    await queryRunner.query(`CREATE OR REPLACE FUNCTION call_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF (SELECT asleep FROM relay_wakeup) IS NOT FALSE THEN PERFORM pg_notify('call_events', ''); END IF;
              RETURN NULL;
            END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE OR REPLACE FUNCTION call_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('call_events', ''); RETURN NULL; END $$`);
    await queryRunner.query(`DROP TABLE "relay_wakeup"`);
  }
}
