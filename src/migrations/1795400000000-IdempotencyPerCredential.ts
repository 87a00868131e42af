import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Records become the sending credential's; older ones cannot say whose, so they go (they would replay raw keys to any credential). */
export class IdempotencyPerCredential1795400000000 implements MigrationInterface {
  name = 'IdempotencyPerCredential1795400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "idempotency_records"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" ADD "credential" character varying(40) NOT NULL`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" DROP CONSTRAINT "PK_9c03b6adebf385ca991d085063a"`);
    await queryRunner.query(
      `ALTER TABLE "idempotency_records" ADD CONSTRAINT "PK_9c03b6adebf385ca991d085063a" PRIMARY KEY ("scope", "key_hash", "credential")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "idempotency_records"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" DROP CONSTRAINT "PK_9c03b6adebf385ca991d085063a"`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" ADD CONSTRAINT "PK_9c03b6adebf385ca991d085063a" PRIMARY KEY ("scope", "key_hash")`);
    await queryRunner.query(`ALTER TABLE "idempotency_records" DROP COLUMN "credential"`);
  }
}
