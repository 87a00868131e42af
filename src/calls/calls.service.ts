import type { EntityManager } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { payerOf } from '../billing/charges.js';
import { Contact } from '../contacts/contact.entity.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { db } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { AppError, ConflictError, NotFoundError } from '../lib/errors.js';
import { formatMoney } from '../lib/money.js';
import { where } from '../lib/sql.js';
import { PhoneNumber } from '../numbers/phone-number.entity.js';
import { Organization } from '../orgs/organization.entity.js';
import type { Direction, SimulateScript } from './call.entity.js';
import { insertQueuedCall, placeOutboundCall, type QueuedCall } from './call-store.js';
import type { CreateCallInput } from './calls.schemas.js';
import type { CallEngine } from './engine.js';

export class InsufficientBalanceError extends AppError {
  constructor() {
    super(402, 'insufficient_balance', 'The paying account’s balance is not above zero; add funds to place calls.');
  }
}

export type NewCall = Omit<QueuedCall, 'id' | 'createdAt' | 'payerOrgId'>;

/**
 * Writes a new `queued` call and its `call.queued` event, after checking that the paying
 * organization's balance is above zero (402 otherwise). For inbound calls, whose number is
 * the one called; outbound calls are placed by `placeOutboundCall`.
 */
export async function queueCall(em: EntityManager, call: NewCall): Promise<QueuedCall> {
  const payer = await payerOf(em, call.orgId);
  if (payer.balanceMicros <= 0n) throw new InsufficientBalanceError();
  return insertQueuedCall(em, { ...call, payerOrgId: payer.id });
}

interface CallRow {
  id: string;
  org_id: string;
  agent_id: string;
  contact_id: string | null;
  campaign_id: string | null;
  direction: Direction;
  status: string;
  outcome: string | null;
  end_reason: string | null;
  phone_number: string;
  our_number: string | null;
  duration_seconds: number | null;
  charge_micros: string | null;
  currency: string;
  started_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
}

const CALL_COLUMNS = `c.id, c.org_id, c.agent_id, c.contact_id, c.campaign_id, c.direction, c.status, c.outcome, c.end_reason,
  c.phone_number, c.our_number, c.duration_seconds, c.charge_micros, c.started_at, c.ended_at, c.created_at,
  (SELECT currency FROM organizations p WHERE p.id = c.payer_org_id) AS currency`;

export function presentCall(c: CallRow) {
  return {
    id: c.id,
    org_id: c.org_id,
    agent_id: c.agent_id,
    contact_id: c.contact_id,
    campaign_id: c.campaign_id,
    direction: c.direction,
    status: c.status,
    outcome: c.outcome,
    end_reason: c.end_reason,
    phone_number: c.phone_number,
    from: c.direction === 'outbound' ? c.our_number : c.phone_number,
    to: c.direction === 'outbound' ? c.phone_number : c.our_number,
    duration_seconds: c.duration_seconds,
    charge: c.charge_micros === null ? null : formatMoney(BigInt(c.charge_micros)),
    currency: c.currency,
    started_at: c.started_at?.toISOString() ?? null,
    ended_at: c.ended_at?.toISOString() ?? null,
    created_at: c.created_at.toISOString(),
  };
}

export class CallsService {
  constructor(private readonly engine: CallEngine) {}

  /**
   * Hands a committed call to the engine (Redis). The call exists once committed, so the answer
   * is the call even when this fails (Redis away): an error would make the client place it again.
   * The engine's sweeper takes up, from Postgres, every call not handed over.
   */
  private async handOff(callId: string, work: () => Promise<void>): Promise<void> {
    await work().catch((err) => logger.warn({ err, callId }, 'calls: not handed to the engine now; its sweeper takes it up'));
  }

  /** `POST /v1/calls`: persists the call as `queued` and answers at once; the engine does the rest. */
  async create(actor: Actor, input: CreateCallInput) {
    const result = await placeOutboundCall(db.manager, {
      orgId: actor.org.id,
      agentId: input.agent_id,
      contactId: input.contact_id,
      campaignId: input.campaign_id ?? null,
      simulate: input.simulate,
    });
    if (!result.placed) {
      if (!result.agentFound) throw new NotFoundError('agent');
      if (!result.contactFound) throw new NotFoundError('contact');
      if (!result.campaignFound) throw new NotFoundError('campaign');
      throw new InsufficientBalanceError();
    }
    const { call, currency } = result;
    await this.handOff(call.id, () => this.engine.submitOutbound(call.orgId, [call]));
    return presentCall({
      id: call.id,
      org_id: call.orgId,
      agent_id: call.agentId,
      contact_id: call.contactId,
      campaign_id: call.campaignId,
      direction: call.direction,
      status: 'queued',
      outcome: null,
      end_reason: null,
      phone_number: call.phoneNumber,
      our_number: call.ourNumber,
      duration_seconds: null,
      charge_micros: null,
      currency,
      started_at: null,
      ended_at: null,
      created_at: call.createdAt,
    });
  }

  list(actor: Actor, query: PageParams & { status?: string; direction?: string; campaign_id?: string }): Promise<Page<ReturnType<typeof presentCall>>> {
    const filters = where('c.org_id = ?', actor.org.id).matching(query, { status: 'c.status', direction: 'c.direction', campaign_id: 'c.campaign_id' });
    return listPage(db, { select: CALL_COLUMNS, from: 'calls c', where: filters }, query, presentCall);
  }

  async get(actor: Actor, id: string) {
    const [row] = await db.query(`SELECT ${CALL_COLUMNS} FROM calls c WHERE c.id = $1 AND c.org_id = $2`, [id, actor.org.id]);
    if (!row) throw new NotFoundError('call');
    return presentCall(row);
  }

  /**
   * A call from `from` to one of an organization's numbers (the simulator's inbound row of
   * CONTRACT.md §3): answered by the number's agent, through the same engine.
   */
  async receiveInbound(input: { to: string; from: string; simulate: SimulateScript }) {
    const call = await db.transaction(async (em) => {
      const number = await em.findOneBy(PhoneNumber, { phoneNumber: input.to });
      if (!number) throw new NotFoundError('phone_number', 'No organization has this number.');
      const org = await em.findOneByOrFail(Organization, { id: number.orgId });
      if (org.disabled) throw new ConflictError('number_not_answering', 'This number does not answer: its organization is disabled.');
      if (!number.agentId) throw new ConflictError('number_not_answering', 'This number does not answer: no agent is assigned to it.');
      const contact = await em.findOneBy(Contact, { orgId: org.id, phoneNumber: input.from });
      return queueCall(em, {
        orgId: org.id,
        agentId: number.agentId,
        contactId: contact?.id ?? null,
        campaignId: null,
        direction: 'inbound',
        phoneNumber: input.from,
        ourNumber: number.phoneNumber,
        simulate: input.simulate,
      });
    });
    await this.handOff(call.id, () => this.engine.jobs.dial(call.id));
    const [row] = await db.query(`SELECT ${CALL_COLUMNS} FROM calls c WHERE c.id = $1`, [call.id]);
    return { call: presentCall(row) };
  }
}
