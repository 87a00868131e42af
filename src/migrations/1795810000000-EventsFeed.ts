import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operational events are `call_events` rows without a call, so `call_id` and `sequence` become nullable
 * (also on deliveries, which copy them); endpoints gain `event_types`, organizations `balance.low` state.
 */
export class EventsFeed1795810000000 implements MigrationInterface {
  name = 'EventsFeed1795810000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // On the partitioned tables, each ALTER reaches every partition.
    await queryRunner.query(`ALTER TABLE "call_events" ALTER COLUMN "call_id" DROP NOT NULL, ALTER COLUMN "sequence" DROP NOT NULL`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" ALTER COLUMN "call_id" DROP NOT NULL, ALTER COLUMN "sequence" DROP NOT NULL`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "event_types" text array NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE "organizations" ADD "low_balance_threshold_micros" bigint, ADD "low_balance_notified" boolean NOT NULL DEFAULT false`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "low_balance_notified", DROP COLUMN "low_balance_threshold_micros"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "event_types"`);
    // Operational events (no call) cannot be kept without the new nullable columns: they go, with their
    // deliveries and attempts.
    await queryRunner.query(
      `DELETE FROM "webhook_attempts" a USING "webhook_deliveries" d
        WHERE d.call_id IS NULL AND a.delivery_id = d.id AND a.delivery_created_at = d.created_at`,
    );
    await queryRunner.query(`DELETE FROM "webhook_deliveries" WHERE call_id IS NULL`);
    await queryRunner.query(`DELETE FROM "call_events" WHERE call_id IS NULL`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" ALTER COLUMN "call_id" SET NOT NULL, ALTER COLUMN "sequence" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "call_events" ALTER COLUMN "call_id" SET NOT NULL, ALTER COLUMN "sequence" SET NOT NULL`);
  }
}
