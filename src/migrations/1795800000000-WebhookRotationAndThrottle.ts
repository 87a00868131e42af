import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rotated endpoint signs with its previous secret too until `previous_secret_expires_at`; pacing to
 * `rate_limit_per_second` keeps `paced_until`, the end of the last send slot handed out.
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
