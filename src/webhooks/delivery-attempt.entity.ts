import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/**
 * One POST of a delivery; `id` is the `X-Ringlane-Delivery-Id` it carried. Partitioned by its
 * delivery's `created_at`, so it lives, and is dropped, with its delivery. No foreign key: a
 * deliveries partition referenced by one could be dropped only once Postgres had checked every
 * attempt partition; attempts are written only for a delivery that exists (the recording
 * statement joins it) and read only through it.
 */
@Entity('webhook_attempts')
@Index('webhook_attempts_delivery_idx', ['deliveryId', 'attemptedAt'])
export class DeliveryAttempt {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_attempts_pkey' })
  id!: string;

  @Column({ name: 'delivery_id', type: 'varchar', length: 40 })
  deliveryId!: string;

  /** The delivery's `created_at`: the partition key. */
  @PrimaryColumn({ name: 'delivery_created_at', ...TIMESTAMP, primaryKeyConstraintName: 'webhook_attempts_pkey' })
  deliveryCreatedAt!: Date;

  @Column({ name: 'attempted_at', ...TIMESTAMP })
  attemptedAt!: Date;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  /** A short text: timeout, refused address, connection error, non-2xx. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  error!: string | null;

  /** At most the first 1 KB of the response body. */
  @Column({ name: 'response_body', type: 'varchar', length: 1024, nullable: true })
  responseBody!: string | null;
}
