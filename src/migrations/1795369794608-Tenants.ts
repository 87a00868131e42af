import { MigrationInterface, QueryRunner } from 'typeorm';

export class Tenants1795369794608 implements MigrationInterface {
  name = 'Tenants1795369794608';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "usage_buckets" ("org_id" character varying(40) NOT NULL, "hour" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "completed_calls" integer NOT NULL DEFAULT '0', "talk_time_seconds" bigint NOT NULL DEFAULT '0', "call_charges_micros" bigint NOT NULL DEFAULT '0', "other_charges_micros" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_54d00bd734efa6315a9d52b612d" PRIMARY KEY ("org_id", "hour"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "usage_watermark" ("id" smallint NOT NULL, "rolled_until" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_a331e5c49266aa7f38f40f0a987" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`ALTER TABLE "organizations" ADD "disabled_at" TIMESTAMP(3) WITH TIME ZONE`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "disabled_at"`);
    await queryRunner.query(`DROP TABLE "usage_watermark"`);
    await queryRunner.query(`DROP TABLE "usage_buckets"`);
  }
}
