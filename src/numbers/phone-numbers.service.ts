import type { EntityManager } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { agentsService } from '../agents/agents.service.js';
import type { CarrierAdapter } from '../calls/carrier.js';
import { carrierFor } from '../calls/simulator.js';
import type { PageParams } from '../lib/pagination.js';
import type { ResourceService } from '../http/resource-routes.js';
import { db } from '../lib/db.js';
import { ConflictError, NotFoundError } from '../lib/errors.js';
import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { PhoneNumber } from './phone-number.entity.js';
import type { ProvisionNumberInput, UpdateNumberInput } from './phone-numbers.schemas.js';

export interface PhoneNumberView {
  id: string;
  phone_number: string;
  agent_id: string | null;
  created_at: string;
  updated_at: string;
}

interface PhoneNumberRow {
  id: string;
  phone_number: string;
  agent_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const presentNumber = (row: PhoneNumberRow): PhoneNumberView => ({
  id: row.id,
  phone_number: row.phone_number,
  agent_id: row.agent_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** Attempts at a number the carrier picked before giving up on collisions with taken numbers. */
const PROVISION_ATTEMPTS = 5;

const TAKEN = 'phone_number_taken';

const numbers = new OrgResourceTable<PhoneNumber, PhoneNumberRow, PhoneNumberView, ProvisionNumberInput, UpdateNumberInput>({
  entity: PhoneNumber,
  table: 'phone_numbers',
  resource: 'phone_number',
  idPrefix: 'pn',
  columns: 'id, phone_number, agent_id, created_at, updated_at',
  present: presentNumber,
  fields: { phone_number: 'phoneNumber', agent_id: 'agentId' },
  conflicts: {
    // A number belongs to one organization across the whole service.
    phone_numbers_number_key: () => new ConflictError(TAKEN, 'This phone number is already in use.'),
  },
  // The agent was deleted between the check and the write.
  missingReference: () => new NotFoundError('agent'),
});

/** `agentId`, when set, must be one of the acting organization's agents (else 404 `agent_not_found`). */
async function checkAgent(orgId: string, agentId: string | null | undefined): Promise<void> {
  if (agentId) await agentsService.findRow(db.manager, orgId, agentId);
}

/** The organization's numbers, provisioned from its carrier; each may be answered by one of its agents. */
export class PhoneNumbersService implements ResourceService<ProvisionNumberInput, UpdateNumberInput, PageParams, PhoneNumberView> {
  readonly resource = numbers.resource;

  /** @param carriers the carrier of a `carrier_provider` (replaceable in tests). */
  constructor(private readonly carriers: (provider: string) => Pick<CarrierAdapter, 'provisionNumber'> = carrierFor) {}

  list(actor: Actor, page: PageParams) {
    return numbers.list(actor, page);
  }

  read(actor: Actor, id: string) {
    return numbers.read(actor, id);
  }

  /**
   * Provisions a number from the organization's carrier. A number asked for by the caller
   * that is taken is 409 `phone_number_taken` at once; one the carrier picked is tried again.
   */
  async create(actor: Actor, input: ProvisionNumberInput): Promise<PhoneNumberView> {
    await checkAgent(actor.org.id, input.agent_id);
    const [org] = await db.query('SELECT carrier_provider FROM organizations WHERE id = $1', [actor.org.id]);
    const carrier = this.carriers(org.carrier_provider);
    for (let attempt = 1; ; attempt++) {
      const number = await carrier.provisionNumber({ areaCode: input.area_code, requested: input.phone_number });
      if (!number) throw new ConflictError('phone_number_unavailable', 'The carrier has no number available for this request.');
      try {
        return await numbers.insert(db.manager, actor.org.id, { phone_number: number, agent_id: input.agent_id });
      } catch (err) {
        const pickedAgain = !input.phone_number && attempt < PROVISION_ATTEMPTS;
        if (!(err instanceof ConflictError && err.code === TAKEN && pickedAgain)) throw err;
      }
    }
  }

  /** Sets or clears the agent answering the number. */
  async update(actor: Actor, id: string, input: UpdateNumberInput): Promise<PhoneNumberView> {
    await numbers.findRow(db.manager, actor.org.id, id);
    await checkAgent(actor.org.id, input.agent_id);
    return presentNumber(await numbers.updateRow(db.manager, actor.org.id, id, input));
  }

  /** Releases the number; if the organization texted from it, it no longer has a sending number. */
  async remove(actor: Actor, id: string): Promise<void> {
    await db.transaction(async (em) => {
      const row = await numbers.deleteRow(em, actor.org.id, id);
      await em.query('UPDATE organizations SET sms_sender = NULL WHERE id = $1 AND sms_sender = $2', [actor.org.id, row.phone_number]);
    });
  }
}

/**
 * Whether `phoneNumber` is one of the organization's own numbers. Inside the caller's
 * transaction it also locks the number until commit, so it cannot be released meanwhile.
 */
export async function lockOwnNumber(em: EntityManager, orgId: string, phoneNumber: string): Promise<boolean> {
  const rows = await em.query('SELECT 1 FROM phone_numbers WHERE org_id = $1 AND phone_number = $2 FOR SHARE', [orgId, phoneNumber]);
  return rows.length > 0;
}
