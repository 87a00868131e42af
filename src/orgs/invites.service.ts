import type { Actor } from '../auth/actor.js';
import { intersect } from '../auth/capabilities.js';
import type { Page, PageParams } from '../lib/pagination.js';
import { presentRow, type Presented } from '../lib/sql.js';
import { ConflictError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { InviteRow, InvitesRepository } from './invites.repository.js';
import type { InviteInput } from './invites.schemas.js';

export const INVITE_VALIDITY = '7 days';

export type InviteView = Presented<InviteRow>;

const inviteExists = () => new ConflictError('invite_exists', 'The organization already has a pending invite for this email.');

/** People invited to become members of the acting organization. */
export class InvitesService {
  constructor(private readonly invites: InvitesRepository) {}

  /** Grants only requested capabilities the caller holds; an expired invite of the email is replaced, a pending one is 409. */
  async create(actor: Actor, input: InviteInput): Promise<InviteView> {
    const capabilities = intersect(input.capabilities, actor.capabilities);
    const row = await this.invites.insertUnlessPending({ id: newId('inv'), orgId: actor.org.id, email: input.email, capabilities }, INVITE_VALIDITY);
    if (!row) throw inviteExists();
    return presentRow(row);
  }

  list(actor: Actor, page: PageParams): Promise<Page<InviteView>> {
    return this.invites.list(actor.org.id, page, presentRow);
  }
}
