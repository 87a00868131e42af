import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

const pkey = { primaryKeyConstraintName: 'tenant_spend_notices_pkey' } as const;

/**
 * A `tenant.spend_threshold` sent: its key is what makes each threshold at most once per tenant
 * per month (the event itself lives in the partitioned `call_events`, where no such key can be).
 */
@Entity('tenant_spend_notices')
export class TenantSpendNotice {
  @PrimaryColumn({ name: 'tenant_id', type: 'varchar', length: 40, ...pkey })
  tenantId!: string;

  /** The UTC calendar month, `YYYY-MM`. */
  @PrimaryColumn({ type: 'varchar', length: 7, ...pkey })
  month!: string;

  /** 80 or 100. */
  @PrimaryColumn({ name: 'threshold_percent', type: 'smallint', ...pkey })
  thresholdPercent!: number;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}
