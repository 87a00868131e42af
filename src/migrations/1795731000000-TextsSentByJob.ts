import type { MigrationInterface, QueryRunner } from 'typeorm';

/** `sent_at`: the carrier accepted the text, so the sweeper can send a text whose job was lost; existing texts count as sent. */
export class TextsSentByJob1795731000000 implements MigrationInterface {
  name = 'TextsSentByJob1795731000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages" ADD "sent_at" TIMESTAMP(3) WITH TIME ZONE`);
    await queryRunner.query(`UPDATE "messages" SET "sent_at" = "created_at"`);
    await queryRunner.query(`CREATE INDEX "messages_unsent_idx" ON "messages" ("created_at") WHERE sent_at IS NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."messages_unsent_idx"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "sent_at"`);
  }
}
