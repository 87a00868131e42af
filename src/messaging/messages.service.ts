import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { listPage, type Page } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { formatMoney } from '../lib/money.js';
import type { MessagesQuery } from './messages.schemas.js';

export interface MessageView {
  id: string;
  call_id: string | null;
  from: string;
  to: string;
  body: string;
  /** What the paying organization was charged, in its currency. */
  charge: string;
  currency: string;
  created_at: string;
}

interface MessageRow {
  id: string;
  call_id: string | null;
  from_number: string;
  to_number: string;
  body: string;
  charge_micros: string;
  currency: string;
  created_at: Date;
}

const presentMessage = (row: MessageRow): MessageView => ({
  id: row.id,
  call_id: row.call_id,
  from: row.from_number,
  to: row.to_number,
  body: row.body,
  charge: formatMoney(BigInt(row.charge_micros)),
  currency: row.currency,
  created_at: row.created_at.toISOString(),
});

// A tenant's texts are paid by its reseller, in the reseller's currency.
const MESSAGE_COLUMNS = `id, call_id, from_number, to_number, body, charge_micros, created_at,
  (SELECT currency FROM organizations payer WHERE payer.id = messages.payer_org_id) AS currency`;

/** `GET /v1/messages`: the texts the acting organization's agents sent, newest first. */
export function listMessages(actor: Actor, query: MessagesQuery): Promise<Page<MessageView>> {
  const filters = where('org_id = ?', actor.org.id).equal('call_id', query.call_id);
  return listPage(db, { select: MESSAGE_COLUMNS, from: 'messages', where: filters }, query, presentMessage);
}
