import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency records belong to the credential that sent the request, not only to the
 * organization. Records made before this cannot say whose they were, so they are dropped
 * (they would replay to any credential of the organization, raw API keys included).
 */
export class IdempotencyPerCredential1795400000000 implements MigrationInterface {
  name = 'IdempotencyPerCredential1795400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "idempotency_records"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" ADD "credential" character varying(40) NOT NULL`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" DROP CONSTRAINT "PK_9c03b6adebf385ca991d085063a"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" ADD CONSTRAINT "PK_9c03b6adebf385ca991d085063a" PRIMARY KEY ("scope", "key_hash", "credential")`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "idempotency_records"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" DROP CONSTRAINT "PK_9c03b6adebf385ca991d085063a"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" ADD CONSTRAINT "PK_9c03b6adebf385ca991d085063a" PRIMARY KEY ("scope", "key_hash")`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" DROP COLUMN "credential"`);
  }
}
