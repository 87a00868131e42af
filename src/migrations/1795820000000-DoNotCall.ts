import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The unique (org_id, phone_number) index is both the 409 `already_listed` and the engine's look-up. */
export class DoNotCall1795820000000 implements MigrationInterface {
  name = 'DoNotCall1795820000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "do_not_call_entries" ("id" character varying(40) NOT NULL, "org_id" character varying(40) NOT NULL, "phone_number" character varying(16) NOT NULL, "reason" character varying(500), "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_b5519030ec1299023d31876f696" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "do_not_call_entries_org_phone_key" ON "do_not_call_entries" ("org_id", "phone_number")`);
    await queryRunner.query(`CREATE INDEX "do_not_call_entries_org_created_idx" ON "do_not_call_entries" ("org_id", "created_at", "id")`);
    await queryRunner.query(
      `ALTER TABLE "do_not_call_entries" ADD CONSTRAINT "FK_531f5ef0509f25841466f7145f0" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    // Down: `skipped` becomes `done`, never `pending`, which would call people who asked not to be called.
    await queryRunner.query(`UPDATE "campaign_contacts" SET "state" = 'done' WHERE "state" = 'skipped'`);
    await queryRunner.query(`DROP TABLE "do_not_call_entries"`);
  }
}
