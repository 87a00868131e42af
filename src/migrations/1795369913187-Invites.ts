import { MigrationInterface, QueryRunner } from 'typeorm';

export class Invites1795369913187 implements MigrationInterface {
  name = 'Invites1795369913187';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "invites" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "email" character varying(254) NOT NULL, "capabilities" text array NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_aa52e96b44a714372f4dd31a0af" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "invites_org_email_key" ON "invites"  ("org_id", "email") `);
    await queryRunner.query(`CREATE INDEX "invites_org_created_idx" ON "invites"  ("org_id", "created_at", "id") `);
    await queryRunner.query(
      `ALTER TABLE "invites" ADD CONSTRAINT "FK_b41b0d83a220ef17786967f4d61" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "invites" DROP CONSTRAINT "FK_b41b0d83a220ef17786967f4d61"`);
    await queryRunner.query(`DROP INDEX "public"."invites_org_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."invites_org_email_key"`);
    await queryRunner.query(`DROP TABLE "invites"`);
  }
}
