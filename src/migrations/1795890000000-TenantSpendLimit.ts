import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant spend limit (CONTRACT.md §5): a tenant's `monthly_spend_limit`; `end_reason` wide enough for
 * `spend_limit_reached`; texts gain `status` and `failure_reason` (existing texts were sent), and the
 * sweeper's index of unsent texts leaves failed ones out (they are never sent); and the thresholds
 * sent, one row per tenant, month and threshold, whose key makes each `tenant.spend_threshold` once.
 * Widening a varchar and adding a column with a constant default rewrite no table.
 */
export class TenantSpendLimit1795890000000 implements MigrationInterface {
  name = 'TenantSpendLimit1795890000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "organizations" ADD "monthly_spend_limit_micros" bigint`);
    await queryRunner.query(`ALTER TABLE "calls" ALTER COLUMN "end_reason" TYPE character varying(32)`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "status" character varying(16) NOT NULL DEFAULT 'sent'`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "failure_reason" character varying(32)`);
    await queryRunner.query(`DROP INDEX "public"."messages_unsent_idx"`);
    await queryRunner.query(`CREATE INDEX "messages_unsent_idx" ON "messages" ("created_at") WHERE sent_at IS NULL AND status = 'sent'`);
    await queryRunner.query(
      `CREATE TABLE "tenant_spend_notices" ("tenant_id" character varying(40) NOT NULL, "month" character varying(7) NOT NULL, "threshold_percent" smallint NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "tenant_spend_notices_pkey" PRIMARY KEY ("tenant_id", "month", "threshold_percent"))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "tenant_spend_notices"`);
    await queryRunner.query(`DROP INDEX "public"."messages_unsent_idx"`);
    await queryRunner.query(`CREATE INDEX "messages_unsent_idx" ON "messages" ("created_at") WHERE sent_at IS NULL`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "failure_reason"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "status"`);
    await queryRunner.query(`ALTER TABLE "calls" ALTER COLUMN "end_reason" TYPE character varying(16)`);
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "monthly_spend_limit_micros"`);
  }
}
