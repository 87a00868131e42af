import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage reads sum a tenant's hourly buckets over up to 366 days: up to 8,784 rows per tenant,
 * written hour by hour for every organization, so each on a heap page of its own. Read from the
 * primary key, a page of 100 tenants over a year touched ~300,000 heap pages; this index holds the
 * sums beside the key, so the same read is an index-only scan of each tenant's few leaf pages
 * (`GET /v1/tenant-usage`, CONTRACT.md §5, and `GET /v1/tenants/{id}/usage`).
 */
export class UsageBucketsCovering1795880000000 implements MigrationInterface {
  name = 'UsageBucketsCovering1795880000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "usage_buckets_org_hour_sums_idx" ON "usage_buckets" ("org_id", "hour")
         INCLUDE ("completed_calls", "talk_time_seconds", "call_charges_micros", "other_charges_micros", "billable_calls_micros", "billable_other_micros")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."usage_buckets_org_hour_sums_idx"`);
  }
}
