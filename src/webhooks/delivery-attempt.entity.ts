import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/**
 * One POST; `id` is its `X-Ringlane-Delivery-Id`. Partitioned with its delivery. No foreign key:
 * it would make dropping a deliveries partition check every attempt partition.
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

  @Column({ type: 'varchar', length: 500, nullable: true })
  error!: string | null;

  @Column({ name: 'response_body', type: 'varchar', length: 1024, nullable: true })
  responseBody!: string | null;
}
