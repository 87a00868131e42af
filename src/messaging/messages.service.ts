import type { Actor } from '../auth/actor.js';
import type { Page } from '../lib/pagination.js';
import { formatMoney } from '../lib/money.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { TextFailureReason, TextStatus } from './message.entity.js';
import type { MessageRow, MessagesRepository } from './messages.repository.js';
import type { MessagesQuery } from './messages.schemas.js';

export interface MessageView {
  id: string;
  call_id: string | null;
  from: string;
  to: string;
  body: string;
  charge: string;
  currency: string;
  status: TextStatus;
  failure_reason: TextFailureReason | null;
  created_at: string;
}

const presentMessage = (row: MessageRow & { currency: string }): MessageView => ({
  id: row.id,
  call_id: row.call_id,
  from: row.from_number,
  to: row.to_number,
  body: row.body,
  charge: formatMoney(BigInt(row.charge_micros)),
  currency: row.currency,
  status: row.status,
  failure_reason: row.failure_reason,
  created_at: row.created_at.toISOString(),
});

/** `GET /v1/messages`: the texts the acting organization's agents sent, newest first. */
export class MessagesService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly orgs: Pick<OrganizationsRepository, 'withPayerCurrency'>,
  ) {}

  async list(actor: Actor, query: MessagesQuery): Promise<Page<MessageView>> {
    const page = await this.messages.list(actor.org.id, query, (row) => row);
    return { ...page, data: (await this.orgs.withPayerCurrency(page.data)).map(presentMessage) };
  }
}
