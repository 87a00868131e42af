import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /v1/tenants?external_ref=` found a reseller's tenant by filtering every row of the parent's
 * index (or the whole table): it grew with the tenants. Keyed by the filter, then the list's order,
 * it reads the matching rows alone; tenants without a reference are left out of it.
 */
export class TenantExternalRefIndex1795850000000 implements MigrationInterface {
  name = 'TenantExternalRefIndex1795850000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "organizations_parent_external_ref_idx" ON "organizations" ("parent_id", "external_ref", "created_at", "id") WHERE external_ref IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."organizations_parent_external_ref_idx"`);
  }
}
