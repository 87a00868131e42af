import type { DataSource } from 'typeorm';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { Actor } from '../auth/actor.js';
import type { CarrierAdapter } from '../carrier/carrier.js';
import type { PageParams } from '../lib/pagination.js';
import type { ResourceService } from '../http/resource-routes.js';
import { ConflictError } from '../lib/errors.js';
import type { SmsSenderService } from '../messaging/sms-sender.service.js';
import { PHONE_NUMBER_TAKEN, type PhoneNumbersRepository, type PhoneNumberView } from './phone-numbers.repository.js';
import type { ProvisionNumberInput, UpdateNumberInput } from './phone-numbers.schemas.js';

/** Attempts at a number the carrier picked before giving up on collisions with taken numbers. */
const PROVISION_ATTEMPTS = 5;

/** What provisioning needs of the carriers (see `Carriers`; tests give their own). */
export interface NumberCarriers {
  ofOrg(orgId: string): Promise<Pick<CarrierAdapter, 'provisionNumber'>>;
}

/** The organization's numbers, provisioned from its carrier. */
export class PhoneNumbersService implements ResourceService<ProvisionNumberInput, UpdateNumberInput, PageParams, PhoneNumberView> {
  readonly resource: string;

  constructor(
    private readonly db: DataSource,
    private readonly numbers: PhoneNumbersRepository,
    private readonly carriers: NumberCarriers,
    private readonly smsSender: SmsSenderService,
    private readonly agents: Pick<AgentsRepository, 'findRow'>,
  ) {
    this.resource = numbers.resource;
  }

  list(actor: Actor, page: PageParams) {
    return this.numbers.list(actor.org.id, page);
  }

  read(actor: Actor, id: string) {
    return this.numbers.read(actor.org.id, id);
  }

  private async checkAgent(orgId: string, agentId: string | null | undefined): Promise<void> {
    if (agentId) await this.agents.findRow(this.db.manager, orgId, agentId);
  }

  /** A number the caller asked for that is taken is 409 at once; one the carrier picked is tried again. */
  async create(actor: Actor, input: ProvisionNumberInput): Promise<PhoneNumberView> {
    await this.checkAgent(actor.org.id, input.agent_id);
    const carrier = await this.carriers.ofOrg(actor.org.id);
    for (let attempt = 1; ; attempt++) {
      const number = await carrier.provisionNumber({ areaCode: input.area_code, requested: input.phone_number });
      if (!number) throw new ConflictError('phone_number_unavailable', 'The carrier has no number available for this request.');
      try {
        return await this.numbers.create(actor.org.id, { phone_number: number, agent_id: input.agent_id });
      } catch (err) {
        const pickedAgain = !input.phone_number && attempt < PROVISION_ATTEMPTS;
        if (!(err instanceof ConflictError && err.code === PHONE_NUMBER_TAKEN && pickedAgain)) throw err;
      }
    }
  }

  async update(actor: Actor, id: string, input: UpdateNumberInput): Promise<PhoneNumberView> {
    await this.numbers.findRow(this.db.manager, actor.org.id, id);
    await this.checkAgent(actor.org.id, input.agent_id);
    return this.numbers.update(actor.org.id, id, input);
  }

  /** Releases the number; if the organization texted from it, it no longer has a sending number. */
  async remove(actor: Actor, id: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const row = await this.numbers.deleteRow(em, actor.org.id, id);
      await this.smsSender.numberReleased(em, actor.org.id, row.phone_number);
    });
  }
}
