import type { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import type { ContactsRepository } from '../contacts/contacts.repository.js';
import type { Page, PageParams } from '../lib/pagination.js';
import { logger } from '../lib/logger.js';
import { AppError, ConflictError, NotFoundError } from '../lib/errors.js';
import { formatMoney } from '../lib/money.js';
import type { PhoneNumbersRepository } from '../numbers/phone-numbers.repository.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { SpendLimitReachedError, type SpendLimits } from '../tenants/spend-limit.js';
import type { SimulateScript } from './call.entity.js';
import type { CallRow, CallsRepository, QueuedCall } from './calls.repository.js';
import type { CreateCallInput } from './calls.schemas.js';
import type { CallEngine } from './engine.js';

export class InsufficientBalanceError extends AppError {
  constructor() {
    super(402, 'insufficient_balance', 'The paying account’s balance is not above zero; add funds to place calls.');
  }
}

type NewCall = Omit<QueuedCall, 'id' | 'createdAt' | 'payerOrgId'>;

function presentCall(c: CallRow & { currency: string }) {
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
    billable: c.billable_micros === null ? null : formatMoney(BigInt(c.billable_micros)),
    currency: c.currency,
    started_at: c.started_at?.toISOString() ?? null,
    ended_at: c.ended_at?.toISOString() ?? null,
    created_at: c.created_at.toISOString(),
  };
}

export class CallsService {
  constructor(
    private readonly db: DataSource,
    private readonly calls: CallsRepository,
    private readonly numbers: PhoneNumbersRepository,
    private readonly engine: CallEngine,
    private readonly orgs: OrganizationsRepository,
    private readonly contacts: Pick<ContactsRepository, 'idByNumber'>,
    private readonly spend: Pick<SpendLimits, 'month'>,
  ) {}

  /**
   * Hands a committed call to the engine (Redis). The call exists once committed, so the answer
   * is the call even when this fails (Redis away): an error would make the client place it again.
   * The engine's sweeper takes up, from Postgres, every call not handed over.
   */
  private async handOff(callId: string, work: () => Promise<void>): Promise<void> {
    await work().catch((err) => logger.warn({ err, callId }, 'calls: not handed to the engine now; its sweeper takes it up'));
  }

  /** `POST /v1/calls`: persists the call as `queued` and answers at once; the engine does the rest. 402 when the payer has no money or the tenant's spend limit is reached. */
  async create(actor: Actor, input: CreateCallInput) {
    const result = await this.calls.placeOutbound(this.db, {
      orgId: actor.org.id,
      agentId: input.agent_id,
      contactId: input.contact_id,
      campaignId: input.campaign_id ?? null,
      simulate: input.simulate,
      month: this.spend.month(),
    });
    if (!result.placed) {
      if (result.reason === 'unfunded') throw new InsufficientBalanceError();
      if (result.reason === 'spend_limit') throw new SpendLimitReachedError();
      throw new NotFoundError(result.reason);
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
      billable_micros: null,
      payer_org_id: call.payerOrgId,
      currency,
      started_at: null,
      ended_at: null,
      created_at: call.createdAt,
    });
  }

  async list(actor: Actor, query: PageParams & { status?: string; direction?: string; campaign_id?: string }): Promise<Page<ReturnType<typeof presentCall>>> {
    const page = await this.calls.list(actor.org.id, query, (row) => row);
    return { ...page, data: (await this.orgs.withPayerCurrency(page.data)).map(presentCall) };
  }

  async get(actor: Actor, id: string) {
    const row = await this.calls.find(id, actor.org.id);
    if (!row) throw new NotFoundError('call');
    return this.present(row);
  }

  /** A call as the API shows it, in its payer's currency. */
  private async present(row: CallRow) {
    const [call] = await this.orgs.withPayerCurrency([row]);
    return presentCall(call);
  }

  /**
   * Writes a new `queued` call and its `call.queued` event, after checking that the paying
   * organization's balance is above zero (402 otherwise). For inbound calls, whose number is
   * the one called; outbound calls are placed by `CallsRepository.placeOutbound`.
   */
  private async queueCall(em: EntityManager, call: NewCall): Promise<QueuedCall> {
    const payer = await this.orgs.payerOf(em, call.orgId);
    if (payer.balanceMicros <= 0n) throw new InsufficientBalanceError();
    return this.calls.insertQueued(em, { ...call, payerOrgId: payer.id });
  }

  /**
   * A call from `from` to one of an organization's numbers (the simulator's inbound row of
   * CONTRACT.md §3): answered by the number's agent, through the same engine.
   */
  async receiveInbound(input: { to: string; from: string; simulate: SimulateScript }) {
    const call = await this.db.transaction(async (em) => {
      const number = await this.numbers.findByNumber(em, input.to);
      if (!number) throw new NotFoundError('phone_number', 'No organization has this number.');
      const org = await this.orgs.load(em, number.orgId);
      if (org.disabled) throw new ConflictError('number_not_answering', 'This number does not answer: its organization is disabled.');
      if (!number.agentId) throw new ConflictError('number_not_answering', 'This number does not answer: no agent is assigned to it.');
      return this.queueCall(em, {
        orgId: org.id,
        agentId: number.agentId,
        contactId: await this.contacts.idByNumber(em, org.id, input.from),
        campaignId: null,
        direction: 'inbound',
        phoneNumber: input.from,
        ourNumber: number.phoneNumber,
        simulate: input.simulate,
      });
    });
    await this.handOff(call.id, () => this.engine.jobs.dial(call.id));
    return { call: await this.present((await this.calls.find(call.id))!) };
  }
}
