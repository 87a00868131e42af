import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The due index is keyed by endpoint first: one probe per endpoint, so one endpoint's backlog no longer slows every claim. */
export class DeliveryQueuePerEndpoint1795500000000 implements MigrationInterface {
  name = 'DeliveryQueuePerEndpoint1795500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_due_idx"`);
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries"  ("endpoint_id", "next_attempt_at") WHERE status IN ('pending', 'retrying')`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_endpoint_due_idx"`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"  ("next_attempt_at") WHERE status IN ('pending', 'retrying')`);
  }
}
