import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Traces across the outbox (docs/operations.md#tracing): a call keeps the W3C traceparent of the
 * request that placed it, and each of its events a copy, written by the statement that writes the
 * event, so the relay and every delivery attempt continue the call's trace. Null while tracing is
 * off. Nullable columns without a default: adding them rewrites no row, partitions included.
 */
export class TraceParent1795910000000 implements MigrationInterface {
  name = 'TraceParent1795910000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "calls" ADD "trace_parent" character varying(55)`);
    await queryRunner.query(`ALTER TABLE "call_events" ADD "trace_parent" character varying(55)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "call_events" DROP COLUMN "trace_parent"`);
    await queryRunner.query(`ALTER TABLE "calls" DROP COLUMN "trace_parent"`);
  }
}
