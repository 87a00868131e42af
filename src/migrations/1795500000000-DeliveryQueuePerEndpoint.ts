import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhooks workers claim due deliveries per endpoint (one index probe each) instead of
 * walking all due deliveries in time order, where a long backlog of one endpoint slowed every
 * claim: the due index is keyed by endpoint first.
 */
export class DeliveryQueuePerEndpoint1795500000000 implements MigrationInterface {
  name = 'DeliveryQueuePerEndpoint1795500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_due_idx"`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries"  ("endpoint_id", "next_attempt_at") WHERE status IN ('pending', 'retrying')`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."webhook_deliveries_endpoint_due_idx"`);
    await queryRunner.query(`CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"  ("next_attempt_at") WHERE status IN ('pending', 'retrying')`);
  }
}
