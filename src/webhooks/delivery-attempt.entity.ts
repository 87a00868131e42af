import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { TIMESTAMP } from '../lib/columns.js';

/** One POST of a delivery; `id` is the `X-Ringlane-Delivery-Id` it carried. */
@Entity('webhook_attempts')
@Index('webhook_attempts_delivery_idx', ['deliveryId', 'attemptedAt'])
export class DeliveryAttempt {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'delivery_id', type: 'varchar', length: 40 })
  deliveryId!: string;

  @ManyToOne(() => WebhookDelivery, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id' })
  delivery?: Relation<WebhookDelivery>;

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
