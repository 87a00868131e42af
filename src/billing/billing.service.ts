import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import type { Page, PageParams } from '../lib/pagination.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { plansOf, type PlanView } from './catalog.js';
import { presentPayment, presentReceipt, type PaymentView, type ReceiptView } from './credits.js';
import { presentBalance, type BalanceView } from './ledger.js';
import type { CreditRow, LedgerRepository } from './ledger.repository.js';

/** The billing area: the acting (paying) organization's money, and the plans it can be on. */
export class BillingService {
  constructor(
    private readonly db: DataSource,
    private readonly ledger: LedgerRepository,
    private readonly orgs: OrganizationsRepository,
  ) {}

  async balance(actor: Actor): Promise<BalanceView> {
    return presentBalance(await this.orgs.load(this.db.manager, actor.org.id));
  }

  payments(actor: Actor, page: PageParams): Promise<Page<PaymentView>> {
    return this.credits(actor.org.id, page, presentPayment);
  }

  receipts(actor: Actor, page: PageParams): Promise<Page<ReceiptView>> {
    return this.credits(actor.org.id, page, presentReceipt);
  }

  async plans(actor: Actor, page: PageParams): Promise<Page<PlanView>> {
    return plansOf(await this.orgs.load(this.db.manager, actor.org.id), page);
  }

  private async credits<V>(orgId: string, page: PageParams, present: (row: CreditRow, currency: string) => V): Promise<Page<V>> {
    const { currency } = await this.orgs.load(this.db.manager, orgId);
    return this.ledger.credits(orgId, page, (row) => present(row, currency));
  }
}
