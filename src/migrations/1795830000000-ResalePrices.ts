import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Resale prices (CONTRACT.md §4). Existing tenant calls and texts were charged at the reseller's rate,
 * so their billable amount is their charge; the watermark is removed so buckets roll up again.
 * Deploy with the code: older workers would end calls without billable amounts and restore the watermark.
 */
export class ResalePrices1795830000000 implements MigrationInterface {
  name = 'ResalePrices1795830000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "organizations" ADD "resale_per_minute_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "organizations" ADD "resale_per_text_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "calls" ADD "billable_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "billable_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "usage_buckets" ADD "billable_calls_micros" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "usage_buckets" ADD "billable_other_micros" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(
      `UPDATE "calls" c SET "billable_micros" = c."charge_micros" FROM "organizations" o
        WHERE o."id" = c."org_id" AND o."parent_id" IS NOT NULL AND c."charge_micros" IS NOT NULL`,
    );
    await queryRunner.query(
      `UPDATE "messages" m SET "billable_micros" = m."charge_micros" FROM "organizations" o
        WHERE o."id" = m."org_id" AND o."parent_id" IS NOT NULL`,
    );
    await queryRunner.query(`DELETE FROM "usage_watermark"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_buckets" DROP COLUMN "billable_other_micros"`);
    await queryRunner.query(`ALTER TABLE "usage_buckets" DROP COLUMN "billable_calls_micros"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "billable_micros"`);
    await queryRunner.query(`ALTER TABLE "calls" DROP COLUMN "billable_micros"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "resale_per_text_micros"`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "resale_per_minute_micros"`);
  }
}
