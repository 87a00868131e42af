import { TERMINAL_SQL } from '../calls/call.entity.js';
import type { CallEngine } from '../calls/engine.js';
import { db } from '../lib/db.js';
import { logger } from '../lib/logger.js';

/**
 * The side effects of a disabled tenant (SPEC.md §3.1), idempotent: running campaigns pause;
 * calls not yet ended end `canceled` with `end_reason` `tenant_disabled`: queued ones
 * uncharged, those in progress charged up to the moment of disabling. (Its numbers stop
 * answering and no text is sent because the tenant is disabled: see receiveInbound and
 * sendConfirmation.) Nothing is deleted. An enabled tenant needs nothing undone.
 */
export async function applyTenantState(engine: CallEngine, tenantId: string): Promise<{ paused: number; ended: number }> {
  const [tenant] = await db.query('SELECT disabled, disabled_at FROM organizations WHERE id = $1 AND parent_id IS NOT NULL', [tenantId]);
  if (!tenant?.disabled) return { paused: 0, ended: 0 };
  const [, paused] = await db.query(`UPDATE campaigns SET state = 'paused', updated_at = now() WHERE org_id = $1 AND state = 'running'`, [tenantId]);
  const open: Array<{ id: string }> = await db.query(
    `SELECT id FROM calls WHERE org_id = $1 AND status NOT IN ${TERMINAL_SQL}`,
    [tenantId],
  );
  const ended = await engine.end(
    open.map((c) => c.id),
    { status: 'canceled', endReason: 'tenant_disabled', at: tenant.disabled_at ?? new Date() },
  );
  if (paused || ended.length) logger.info({ tenantId, paused, ended: ended.length }, 'tenant disabled: campaigns paused, calls ended');
  return { paused, ended: ended.length };
}

/** Disabled tenants that still have something running (a lost job is made up here). */
export async function tenantsNeedingEffects(): Promise<string[]> {
  const rows: Array<{ id: string }> = await db.query(
    `SELECT o.id FROM organizations o
      WHERE o.disabled AND o.parent_id IS NOT NULL
        AND (EXISTS (SELECT 1 FROM campaigns k WHERE k.org_id = o.id AND k.state = 'running')
          OR EXISTS (SELECT 1 FROM calls c WHERE c.org_id = o.id AND c.status NOT IN ${TERMINAL_SQL}))`,
  );
  return rows.map((r) => r.id);
}
