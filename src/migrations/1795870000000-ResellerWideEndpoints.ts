import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reseller-wide webhook endpoints (CONTRACT.md §5): an endpoint gains `tenant_events` ('none' or
 * 'all') and `tenant_ids` (empty: every tenant); a delivery gains `tenant_id`, the tenant whose
 * event it is. Deliveries made before were all to the event's own organization, so theirs is that
 * organization when it is a tenant. A reseller's list filtered by one tenant reads its own index
 * (tenants' deliveries only), not every delivery of the reseller.
 */
export class ResellerWideEndpoints1795870000000 implements MigrationInterface {
  name = 'ResellerWideEndpoints1795870000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "tenant_events" character varying(8) NOT NULL DEFAULT 'none'`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "tenant_ids" text array NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" ADD "tenant_id" character varying(40)`);
    await queryRunner.query(`UPDATE "webhook_deliveries" SET tenant_id = org_id WHERE org_id IN (SELECT id FROM "organizations" WHERE parent_id IS NOT NULL)`);
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_org_tenant_created_idx" ON "webhook_deliveries" ("org_id", "tenant_id", "created_at", "id") WHERE tenant_id IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_org_tenant_created_idx"`);
    await queryRunner.query(`ALTER TABLE "webhook_deliveries" DROP COLUMN "tenant_id"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "tenant_ids"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "tenant_events"`);
  }
}
