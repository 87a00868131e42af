import { db } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { TERMINAL_SQL } from './call.entity.js';
import type { CallEngine } from './engine.js';

/** How long a step may lag before the sweeper assumes its job was lost. */
const GRACE = '10 seconds';

/**
 * Postgres is the source of truth; Redis can lose a job or a key (a crash between a commit
 * and an enqueue, a Redis restart). Every few seconds this re-drives what the database says
 * is unfinished; every step it re-drives is idempotent.
 */
export async function sweepCalls(engine: CallEngine): Promise<{ requeued: number; redialed: number; released: number }> {
  // 1. Outbound calls committed as queued but never dialed: back into their admission queue.
  const waiting: Array<{ id: string; org_id: string; created_at: Date }> = await db.query(
    `SELECT id, org_id, created_at FROM calls
      WHERE status = 'queued' AND dialed_at IS NULL AND direction = 'outbound' AND created_at < now() - interval '${GRACE}'
      ORDER BY created_at LIMIT 5000`,
  );
  const byOrg = new Map<string, Array<{ id: string; createdAt: Date }>>();
  for (const row of waiting) byOrg.set(row.org_id, [...(byOrg.get(row.org_id) ?? []), { id: row.id, createdAt: row.created_at }]);
  for (const [orgId, calls] of byOrg) await engine.submitOutbound(orgId, calls);

  // 2. Inbound calls never dialed, and dialed calls whose carrier reports are overdue:
  //    dialing again reschedules the same reports under the same job ids.
  const stalled: Array<{ id: string }> = await db.query(
    `SELECT id FROM calls
      WHERE status NOT IN ${TERMINAL_SQL}
        AND ((dialed_at IS NULL AND direction = 'inbound' AND created_at < now() - interval '${GRACE}')
          OR (dialed_at IS NOT NULL AND updated_at < now() - interval '${GRACE}'))
      LIMIT 5000`,
  );
  await engine.dial(stalled.map((s) => s.id));

  // 3. Slots still held by calls that have ended (a crash between the end and the release).
  let released = 0;
  for (const orgId of await engine.limits.orgsWithActiveCalls()) {
    const holding = await engine.limits.activeCalls(orgId);
    if (holding.length === 0) continue;
    const ended: Array<{ id: string }> = await db.query(
      `SELECT id FROM calls WHERE id = ANY($1) AND status IN ${TERMINAL_SQL}`,
      [holding],
    );
    await engine.limits.release(orgId, ended.map((c) => c.id));
    released += ended.length;
  }
  // ...and every organization with calls waiting gets a dispatch (a lost wake-up is made up).
  for (const orgId of await engine.limits.orgsWithWaitingCalls()) await engine.jobs.dispatch(orgId);

  // 4. Running campaigns: a tick lost between a call's end and its follow-up is made up here.
  const running: Array<{ id: string }> = await db.query(`SELECT id FROM campaigns WHERE state = 'running'`);
  for (const { id } of running) await engine.jobs.campaignTick(id);
  const result = { requeued: waiting.length, redialed: stalled.length, released };
  if (result.requeued || result.redialed || result.released) logger.info(result, 'call sweeper re-drove unfinished work');
  return result;
}
