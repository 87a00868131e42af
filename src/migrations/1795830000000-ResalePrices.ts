import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Resale prices (CONTRACT.md §4 "Resale prices"): what a reseller bills each tenant.
 *
 * - `organizations.resale_per_minute_micros` / `resale_per_text_micros`: a tenant's prices, set
 *   by its reseller (`PUT /v1/tenants/{id}/prices`); null: the reseller's own rates apply.
 * - `calls.billable_micros`, `messages.billable_micros`: what the tenant owes for the call or the
 *   text at the prices in force when the call ended; null for an organization that is no tenant.
 * - `usage_buckets.billable_calls_micros` / `billable_other_micros`: their hourly sums.
 *
 * Calls and texts of tenants recorded before had no resale prices, so the price in force was
 * the reseller's rate, the one their charge was taken at: their billable amount is their charge.
 * The buckets are rolled up again from the start (the watermark is removed), so the billable
 * sums of past hours are filled in by the usage worker's next run; reads are exact meanwhile,
 * from the source rows. Deploy with the code: a previous calls worker would end tenants' calls
 * without a billable amount, and a previous usage worker would bring the watermark back.
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
