import type { Actor } from '../auth/actor.js';
import { intersect, type Capability } from '../auth/capabilities.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { db } from '../lib/db.js';
import { ConflictError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { InviteInput } from './invites.schemas.js';

/** How long an invite stays pending. */
export const INVITE_VALIDITY = '7 days';

export interface InviteView {
  id: string;
  email: string;
  capabilities: Capability[];
  created_at: string;
  expires_at: string;
}

interface InviteRow {
  id: string;
  email: string;
  capabilities: Capability[];
  created_at: Date;
  expires_at: Date;
}

const INVITE_COLUMNS = 'id, email, capabilities, created_at, expires_at';

const presentInvite = (row: InviteRow): InviteView => ({
  id: row.id,
  email: row.email,
  capabilities: row.capabilities,
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at.toISOString(),
});

const inviteExists = () => new ConflictError('invite_exists', 'The organization already has a pending invite for this email.');

/**
 * Invites a person to the acting organization. The capabilities granted are those requested
 * that the caller holds itself (as for API keys: nobody hands out more than they have).
 * One statement, safe against a concurrent invite of the same email: the unique index on
 * (org_id, email) lets only one insert win; an expired invite is replaced in place by the
 * new one, a pending one is 409 `invite_exists`.
 */
export async function createInvite(actor: Actor, input: InviteInput): Promise<InviteView> {
  const capabilities = intersect(input.capabilities, actor.capabilities);
  const rows: InviteRow[] = await db.query(
    `INSERT INTO invites (id, org_id, email, capabilities, expires_at)
     VALUES ($1, $2, $3, $4, now() + interval '${INVITE_VALIDITY}')
     ON CONFLICT (org_id, email) DO UPDATE
       SET id = EXCLUDED.id, capabilities = EXCLUDED.capabilities, expires_at = EXCLUDED.expires_at,
           created_at = now(), updated_at = now()
       WHERE invites.expires_at <= now()
     RETURNING ${INVITE_COLUMNS}`,
    [newId('inv'), actor.org.id, input.email, capabilities],
  );
  if (rows.length === 0) throw inviteExists();
  return presentInvite(rows[0]);
}

/** `GET /v1/invites`: the acting organization's invites, newest first, expired ones included. */
export function listInvites(actor: Actor, page: PageParams): Promise<Page<InviteView>> {
  return listPage(db, { select: INVITE_COLUMNS, from: 'invites', where: where('org_id = ?', actor.org.id) }, page, presentInvite);
}
