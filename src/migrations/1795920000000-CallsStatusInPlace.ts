import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A call's row changes four times (dialed, ringing, in progress, ended). Postgres writes a change
 * in place, without a new entry in every index of the table ("HOT"), only when no indexed column
 * changes and the row's page has room. The index on `status` made each status change write five
 * index entries. Its one reader, the sweeper, finds unfinished calls by `ended_at IS NULL` instead
 * (the ending writes `ended_at` with the terminal status, and changes an indexed column anyway),
 * and new pages of the table keep a fifth free for the changes of their calls.
 */
export class CallsStatusInPlace1795920000000 implements MigrationInterface {
  name = 'CallsStatusInPlace1795920000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."calls_status_idx"`);
    await queryRunner.query(`CREATE INDEX "calls_open_idx" ON "calls" ("created_at") WHERE ended_at IS NULL`);
    await queryRunner.query(`ALTER TABLE "calls" SET (fillfactor = 80)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "calls" RESET (fillfactor)`);
    await queryRunner.query(`DROP INDEX "public"."calls_open_idx"`);
    await queryRunner.query(`CREATE INDEX "calls_status_idx" ON "calls" ("status") `);
  }
}
