import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every event gains `account_id`: the account it belongs to, its reseller's id for a tenant's event,
 * its organization's own otherwise (billing's payer, `COALESCE(parent_id, id)`). A reseller's feed
 * across its tenants and its reseller-wide endpoints (CONTRACT.md §5) find the events of all its
 * tenants by it: one index range, newest first, however many tenants; an event's tenant is its
 * `org_id` when `account_id` differs from it.
 */
export class EventAccount1795860000000 implements MigrationInterface {
  name = 'EventAccount1795860000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "call_events" ADD "account_id" character varying(40)`);
    await queryRunner.query(`UPDATE "call_events" ev SET account_id = COALESCE(o.parent_id, o.id) FROM "organizations" o WHERE o.id = ev.org_id`);
    await queryRunner.query(`UPDATE "call_events" SET account_id = org_id WHERE account_id IS NULL`);
    await queryRunner.query(`ALTER TABLE "call_events" ALTER COLUMN "account_id" SET NOT NULL`);
    await queryRunner.query(`CREATE INDEX "call_events_account_created_idx" ON "call_events" ("account_id", "created_at", "id")`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."call_events_account_created_idx"`);
    await queryRunner.query(`ALTER TABLE "call_events" DROP COLUMN "account_id"`);
  }
}
