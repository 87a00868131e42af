import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { TIMESTAMP } from '../lib/columns.js';

export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed';

/**
 * One event for one endpoint. Partitioned by its event's `created_at`, so the unique key can
 * include it (Postgres requires that) and still mean one delivery per event and endpoint.
 */
@Entity('webhook_deliveries')
@Index('webhook_deliveries_event_endpoint_key', ['eventId', 'endpointId', 'createdAt'], { unique: true })
@Index('webhook_deliveries_org_created_idx', ['orgId', 'createdAt', 'id'])
/** A reseller's deliveries of one tenant's events (the list's `tenant_id` filter). */
@Index('webhook_deliveries_org_tenant_created_idx', ['orgId', 'tenantId', 'createdAt', 'id'], { where: 'tenant_id IS NOT NULL' })
/** The delivery queue: claims and the endpoint scan use it. */
@Index('webhook_deliveries_endpoint_due_idx', ['endpointId', 'nextAttemptAt'], { where: `status IN ('pending', 'retrying')` })
@Index('webhook_deliveries_endpoint_created_idx', ['endpointId', 'createdAt'])
export class WebhookDelivery {
  @PrimaryColumn({ type: 'varchar', length: 40, primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  id!: string;

  /** The endpoint's organization: a reseller-wide endpoint's deliveries of its tenants' events are the reseller's. */
  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  /** The tenant whose event it is (`eventTenantIdSql`); null for an event of an organization that is not a tenant. */
  @Column({ name: 'tenant_id', type: 'varchar', length: 40, nullable: true })
  tenantId!: string | null;

  @Column({ name: 'endpoint_id', type: 'varchar', length: 40 })
  endpointId!: string;

  @ManyToOne(() => WebhookEndpoint, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id' })
  endpoint?: Relation<WebhookEndpoint>;

  @Column({ name: 'event_id', type: 'varchar', length: 40 })
  eventId!: string;

  /** Null for an operational event. */
  @Column({ name: 'call_id', type: 'varchar', length: 40, nullable: true })
  callId!: string | null;

  @Column({ type: 'varchar', length: 32 })
  event!: string;

  @Column({ type: 'integer', nullable: true })
  sequence!: number | null;

  @Column({ type: 'varchar', length: 16 })
  status!: DeliveryStatus;

  @Column({ name: 'attempt_count', type: 'integer', default: 0 })
  attemptCount!: number;

  @Column({ name: 'next_attempt_at', ...TIMESTAMP, nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'last_response_status', type: 'integer', nullable: true })
  lastResponseStatus!: number | null;

  /** The event's `created_at`: the partition key. */
  @PrimaryColumn({ name: 'created_at', ...TIMESTAMP, default: () => 'now()', primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', ...TIMESTAMP })
  updatedAt!: Date;
}
