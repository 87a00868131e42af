import { Column, Entity, Index } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';
import { OrgOwned } from '../orgs/org-owned.js';

/** CONTRACT.md §5: whether a reseller's endpoint also gets its tenants' events. */
export const TENANT_EVENTS = ['none', 'all'] as const;
export type TenantEvents = (typeof TENANT_EVENTS)[number];

/** Where an organization's events are delivered (SPEC.md §2.5). */
@Entity('webhook_endpoints')
@Index('webhook_endpoints_org_created_idx', ['orgId', 'createdAt', 'id'])
export class WebhookEndpoint extends OrgOwned {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  /** Write-only through the API (responses show `has_secret`). */
  @Column({ type: 'varchar', length: 512, select: false })
  secret!: string;

  /** Empty = every call event (operational events only when listed). */
  @Column({ name: 'event_types', type: 'text', array: true, default: () => "'{}'" })
  eventTypes!: string[];

  /** Empty = every outcome. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  outcomes!: string[];

  /** 'all': a reseller's endpoint gets its tenants' events too, while the organization is a reseller. */
  @Column({ name: 'tenant_events', type: 'varchar', length: 8, default: 'none' })
  tenantEvents!: TenantEvents;

  /** With `tenantEvents` 'all': the tenants whose events it gets; empty = every tenant, later ones too. */
  @Column({ name: 'tenant_ids', type: 'text', array: true, default: () => "'{}'" })
  tenantIds!: string[];

  @Column({ name: 'field_aliases', type: 'jsonb', default: {} })
  fieldAliases!: Record<string, string>;

  @Column({ name: 'extra_payload', type: 'jsonb', default: {} })
  extraPayload!: Record<string, unknown>;

  @Column({ name: 'custom_headers', type: 'jsonb', default: {} })
  customHeaders!: Record<string, string>;

  @Column({ type: 'boolean', default: false })
  disabled!: boolean;

  /** Write-only; signs too until `previousSecretExpiresAt`. */
  @Column({ name: 'previous_secret', type: 'varchar', length: 512, nullable: true, select: false })
  previousSecret!: string | null;

  @Column({ name: 'previous_secret_expires_at', ...TIMESTAMP, nullable: true })
  previousSecretExpiresAt!: Date | null;

  /** Per second, across every webhooks worker; null: no limit. */
  @Column({ name: 'rate_limit_per_second', type: 'integer', nullable: true })
  rateLimitPerSecond!: number | null;

  /** End of the last send slot handed out. Microseconds, unlike TIMESTAMP: slots 1.05/rate s apart must not shrink by rounding. */
  @Column({ name: 'paced_until', type: 'timestamptz', nullable: true })
  pacedUntil!: Date | null;

  /** Start of the current failure streak; null once an attempt succeeds. */
  @Column({ name: 'failing_since', ...TIMESTAMP, nullable: true })
  failingSince!: Date | null;
}
