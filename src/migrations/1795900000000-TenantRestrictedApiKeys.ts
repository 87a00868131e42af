import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant-restricted API keys (CONTRACT.md §5): a key's `tenant_ids`, the tenants it may act in,
 * or null for a key of the whole account (every key so far). Read with the key on authentication,
 * so the restriction costs no query of its own.
 */
export class TenantRestrictedApiKeys1795900000000 implements MigrationInterface {
  name = 'TenantRestrictedApiKeys1795900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "tenant_ids" text array`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "tenant_ids"`);
  }
}
