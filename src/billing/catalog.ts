import { pageOfItems, type Page, type PageParams } from '../lib/pagination.js';
import { formatMoney } from '../lib/money.js';
import type { Organization } from '../orgs/organization.entity.js';

export interface PlanView {
  id: string;
  name: string;
  description: string;
  rates: { per_minute: string; per_text: string };
  currency: string;
  current: boolean;
}

export interface AddOnView {
  id: string;
  name: string;
  description: string;
}

/** Every organization is on this plan today: there is no plan change yet. */
const CURRENT_PLAN = 'pay_as_you_go';

const PLANS = [
  {
    id: 'pay_as_you_go',
    name: 'Pay as you go',
    description: 'Calls billed per started second at the per-minute rate, texts per text, from the prepaid balance.',
  },
] as const;

const ADD_ONS: readonly AddOnView[] = [
  { id: 'extra_numbers', name: 'Extra phone numbers', description: "More phone numbers for the organization's agents." },
  { id: 'call_recording', name: 'Call recording', description: "Recordings of the organization's calls." },
];

/** `GET /v1/plans`: the catalog of plans, with the organization's rates. */
export function plansOf(org: Pick<Organization, 'ratePerMinuteMicros' | 'ratePerTextMicros' | 'currency'>, page: PageParams): Page<PlanView> {
  const plans = PLANS.map((plan) => ({
    ...plan,
    rates: { per_minute: formatMoney(org.ratePerMinuteMicros), per_text: formatMoney(org.ratePerTextMicros) },
    currency: org.currency,
    current: plan.id === CURRENT_PLAN,
  }));
  return pageOfItems(plans, page);
}

/** `GET /v1/add-ons`: the catalog of add-ons. */
export function listAddOns(page: PageParams): Page<AddOnView> {
  return pageOfItems(ADD_ONS, page);
}
