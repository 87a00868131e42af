import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 13, items 1 and 3 (CONTRACT.md §4 "Webhook secret rotation", "Event types and endpoint
 * filters"): an endpoint keeps the secret it had before a rotation, write-only, signing beside
 * the new one until `previous_secret_expires_at`; and it may be paced to
 * `rate_limit_per_second`, with `paced_until` (the end of the last send slot handed out) kept
 * by the webhooks workers' claims.
 */
export class WebhookRotationAndThrottle1795800000000 implements MigrationInterface {
  name = 'WebhookRotationAndThrottle1795800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "previous_secret" character varying(512)`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "previous_secret_expires_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "rate_limit_per_second" integer`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" ADD "paced_until" TIMESTAMP WITH TIME ZONE`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "paced_until"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "rate_limit_per_second"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_expires_at"`);
    await queryRunner.query(`ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret"`);
  }
}
