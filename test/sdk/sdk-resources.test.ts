// The SDK (as built into sdk/dist by `npm pack`) against a running Ringlane: every operation of
// docs/openapi.json through its resource method, one test per family; pages; errors by code.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { expect } from 'chai';
import { addMember, uniqueEmail } from '../helpers/api.js';
import { uniquePhone } from '../helpers/voice.js';
import { eventually } from '../helpers/processes.js';
import { account, rejectionOf, runningRinglane, type Client } from './harness.js';

const USAGE_CSV_HEADER =
  'tenant_id,name,external_ref,disabled,since,until,completed_calls,talk_time_seconds,currency,charges_calls,charges_other,charges_total,billable_calls,billable_other,billable_total';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** An agent, a number it answers and a contact, made through the SDK. */
async function agentAndContact(client: Client) {
  const agent = await client.agents.create({ name: 'Front desk', greeting: 'Hello, how can I help?' });
  const number = await client.phoneNumbers.create({ area_code: '415', agent_id: agent.id });
  const contact = await client.contacts.create({ name: 'Ana Silva', phone_number: uniquePhone() });
  return { agent, number, contact };
}

describe('@ringlane/sdk: every resource family against a running Ringlane', function () {
  this.timeout(60_000);
  const ringlane = runningRinglane(['calls']);

  it('tenants: create, list by external_ref, get, update, limits, usage, resale prices, the usage of every tenant (pages and CSV); forTenant and the tenantId option', async () => {
    const client = ringlane.client((await account()).key);
    const tenant = await client.tenants.create({ name: 'Bright Smiles', timezone: 'America/Chicago', industry: 'dental', external_ref: 'crm-4711' });
    expect(tenant).to.include({ name: 'Bright Smiles', timezone: 'America/Chicago', industry: 'dental', external_ref: 'crm-4711', disabled: false });
    expect((await client.tenants.list({ external_ref: 'crm-4711' })).data).to.deep.equal([tenant]);
    expect(await client.tenants.get(tenant.id)).to.deep.equal(tenant);
    expect(await client.tenants.update(tenant.id, { name: 'Bright Smiles Dental' })).to.include({ id: tenant.id, name: 'Bright Smiles Dental' });

    const limits = await client.tenants.updateLimits(tenant.id, { max_concurrent_calls: 1, monthly_spend_limit: '50.000000' });
    expect(limits).to.include({ max_concurrent_calls: 1, monthly_spend_limit: '50.000000', spent_this_month: '0.000000' });
    expect(await client.tenants.getLimits(tenant.id)).to.deep.equal(limits);
    const window = { since: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:00Z' };
    expect(await client.tenants.getUsage(tenant.id, window)).to.include({ tenant_id: tenant.id, completed_calls: 0, since: '2026-01-01T00:00:00.000Z' });
    expect(await client.tenants.setPrices(tenant.id, { per_minute: '0.200000', per_text: '0.020000' })).to.include({ per_minute: '0.200000' });
    expect(await client.tenants.getPrices(tenant.id)).to.deep.include({ tenant_id: tenant.id, per_minute: '0.200000', per_text: '0.020000' });

    expect((await client.tenantUsage.list(window)).data.map((row) => [row.tenant_id, row.name])).to.deep.equal([[tenant.id, 'Bright Smiles Dental']]);
    const csv = (await client.tenantUsage.csv(window)).split('\r\n');
    expect(csv[0]).to.equal(USAGE_CSV_HEADER);
    expect(csv[1]).to.match(new RegExp(`^${tenant.id},Bright Smiles Dental,crm-4711,false,`));

    // Inside the tenant: its own starter agent, which the reseller's own list does not show.
    const inside = client.forTenant(tenant.id);
    expect(inside.tenantId).to.equal(tenant.id);
    const [starter] = (await inside.agents.list()).data;
    expect(starter).to.have.property('id');
    expect((await client.agents.list()).data.map((a) => a.id)).to.not.include(starter.id);
    expect((await client.agents.list(undefined, { tenantId: tenant.id })).data).to.deep.equal([starter]);
    // `tenantId: null` acts as the account itself, also on a tenant's client (tenant endpoints are closed inside one).
    expect((await inside.tenants.get(tenant.id, { tenantId: null })).id).to.equal(tenant.id);
  });

  it('API keys and sessions: create a key and use it, list, revoke; sign in with a password for a session token', async () => {
    const org = await account({ reseller: false });
    const client = ringlane.client(org.key);
    const created = await client.apiKeys.create({ label: 'billing-sync', permissions: ['operate'] });
    expect(created).to.include({ label: 'billing-sync' });
    expect(created.permissions).to.deep.equal(['operate']);
    expect(created.key).to.match(/^rk_live_/);
    expect((await ringlane.client(created.key).organization.get()).id).to.equal(org.id);
    // A client logged whole does not show its key.
    expect(inspect(ringlane.client(created.key), { depth: null })).to.not.include(created.key);
    const keyIds: string[] = [];
    for await (const key of client.apiKeys.list({ limit: 1 })) keyIds.push(key.key_id);
    expect(keyIds).to.have.members([created.key_id, org.keyId]);

    expect(await client.apiKeys.delete(created.key_id)).to.equal(undefined);
    expect(await rejectionOf(ringlane.client(created.key).organization.get())).to.include({ status: 401, code: 'unauthorized' });

    const email = uniqueEmail('sdk');
    await addMember(org.id, { email, capabilities: ['operate'], password: 'correct horse battery staple' });
    const session = await ringlane.client(undefined).sessions.create({ email, password: 'correct horse battery staple' });
    expect(session.token).to.be.a('string').that.is.not.empty;
    expect((await ringlane.client(session.token).organization.get()).id).to.equal(org.id);
  });

  it('organization, carrier, texting sender and booking page: read and change the settings', async () => {
    const org = await account({ reseller: false });
    const client = ringlane.client(org.key);
    expect(await client.organization.update({ name: 'Acme Dental', timezone: 'Europe/Berlin' })).to.include({ id: org.id, name: 'Acme Dental' });
    expect(await client.organization.get()).to.include({ name: 'Acme Dental', timezone: 'Europe/Berlin' });
    expect(await client.carrier.set({ provider: 'simulator' })).to.deep.equal({ provider: 'simulator' });
    expect(await client.carrier.get()).to.deep.equal({ provider: 'simulator' });
    const number = await client.phoneNumbers.create({ area_code: '212' });
    expect(await client.smsSender.set({ phone_number: number.phone_number })).to.deep.equal({ phone_number: number.phone_number });
    expect(await client.smsSender.get()).to.deep.equal({ phone_number: number.phone_number });
    const page = await client.bookingPage.set({ enabled: true, headline: 'Book a cleaning' });
    expect(page).to.include({ enabled: true, headline: 'Book a cleaning' });
    expect(await client.bookingPage.get()).to.deep.equal(page);
  });

  it('agents, phone numbers, contacts and the do-not-call list: create, list, get, update, delete', async () => {
    const client = ringlane.client((await account({ reseller: false })).key);
    const { agent, number, contact } = await agentAndContact(client);
    expect(await client.agents.get(agent.id)).to.deep.equal(agent);
    expect(await client.agents.update(agent.id, { name: 'Reception' })).to.include({ id: agent.id, name: 'Reception' });
    expect((await client.agents.list()).data.map((a) => a.id)).to.include(agent.id);

    expect(number.agent_id).to.equal(agent.id);
    expect((await client.phoneNumbers.list()).data).to.deep.equal([number]);
    expect(await client.phoneNumbers.update(number.id, { agent_id: null })).to.include({ id: number.id, agent_id: null });
    expect(await client.phoneNumbers.get(number.id)).to.include({ id: number.id, agent_id: null });

    expect((await client.contacts.list({ phone_number: contact.phone_number })).data).to.deep.equal([contact]);
    expect(await client.contacts.update(contact.id, { email: 'ana@example.com' })).to.include({ email: 'ana@example.com' });
    expect(await client.contacts.get(contact.id)).to.include({ id: contact.id, email: 'ana@example.com' });

    const entry = await client.doNotCall.create({ phone_number: contact.phone_number, reason: 'Asked not to be called' });
    expect((await client.doNotCall.list({ phone_number: contact.phone_number })).data).to.deep.equal([entry]);
    await client.doNotCall.delete(entry.id);
    expect((await client.doNotCall.list()).data).to.deep.equal([]);

    await client.contacts.delete(contact.id);
    await client.phoneNumbers.delete(number.id);
    await client.agents.delete(agent.id);
    expect(await rejectionOf(client.agents.get(agent.id))).to.include({ status: 404, code: 'agent_not_found' });
    expect(await rejectionOf(client.contacts.get(contact.id))).to.include({ code: 'contact_not_found' });
    expect(await rejectionOf(client.phoneNumbers.get(number.id))).to.include({ code: 'phone_number_not_found' });
  });

  it('locations and services: create, list, get, update, delete', async () => {
    const client = ringlane.client((await account({ reseller: false })).key);
    const location = await client.locations.create({ name: 'Downtown', address: '1 Main St' });
    expect((await client.locations.list()).data.map((l) => l.id)).to.include(location.id);
    expect(await client.locations.update(location.id, { name: 'Downtown clinic' })).to.include({ name: 'Downtown clinic' });
    expect(await client.locations.get(location.id)).to.include({ id: location.id, name: 'Downtown clinic', address: '1 Main St' });
    await client.locations.delete(location.id);
    expect(await rejectionOf(client.locations.get(location.id))).to.include({ code: 'location_not_found' });

    const service = await client.services.create({ name: 'Cleaning', duration_minutes: 45 });
    expect((await client.services.list()).data.map((s) => s.id)).to.include(service.id);
    expect(await client.services.update(service.id, { description: 'A full cleaning' })).to.include({ description: 'A full cleaning' });
    expect(await client.services.get(service.id)).to.include({ id: service.id, name: 'Cleaning', duration_minutes: 45 });
    await client.services.delete(service.id);
    expect(await rejectionOf(client.services.get(service.id))).to.include({ code: 'service_not_found' });
  });

  it('calls, messages and events: place a call, follow it to completed, read its confirmation text and its events', async () => {
    const client = ringlane.client((await account({ reseller: false })).key);
    const { agent, number, contact } = await agentAndContact(client);
    await client.smsSender.set({ phone_number: number.phone_number });
    const call = await client.calls.create({ agent_id: agent.id, contact_id: contact.id, simulate: { duration_seconds: 3, outcome: 'positive' } });
    expect(call).to.include({ status: 'queued', agent_id: agent.id, contact_id: contact.id });
    const done = await eventually(
      () => client.calls.get(call.id),
      (c) => c.status === 'completed',
      'the call completes',
    );
    expect(done).to.include({ duration_seconds: 3, outcome: 'positive', charge: '0.006000' });

    const [text] = await eventually(
      async () => (await client.messages.list({ call_id: call.id })).data,
      (m) => m.length === 1,
      'the confirmation text',
    );
    expect(text).to.include({ call_id: call.id, to: contact.phone_number, from: number.phone_number, status: 'sent' });
    const events = await eventually(
      async () => (await client.events.list({ call_id: call.id })).data,
      (e) => e.length === 4,
      'four events',
    );
    expect(events.map((e) => e.type)).to.deep.equal(['call.completed', 'call.in_progress', 'call.ringing', 'call.queued']);
    expect(await client.events.get(events[0].id)).to.deep.equal(events[0]);
  });

  it('campaigns: create, list by state, get, update; an update the state forbids is invalid_state_transition with from and to', async () => {
    const client = ringlane.client((await account({ reseller: false })).key);
    const { agent, contact } = await agentAndContact(client);
    const campaign = await client.campaigns.create({ name: 'Recall', agent_id: agent.id, contact_ids: [contact.id] });
    expect(campaign).to.include({ name: 'Recall', state: 'draft' });
    expect((await client.campaigns.list({ state: 'draft' })).data.map((c) => c.id)).to.deep.equal([campaign.id]);
    expect(await client.campaigns.update(campaign.id, { name: 'Spring recall' })).to.include({ name: 'Spring recall' });
    expect(await client.campaigns.get(campaign.id)).to.include({ id: campaign.id, name: 'Spring recall', state: 'draft' });
    const refused = await rejectionOf(client.campaigns.update(campaign.id, { state: 'paused' }));
    expect(refused).to.include({ status: 409, code: 'invalid_state_transition' });
    expect(ringlane.sdk.isRinglaneError(refused) && refused.error).to.include({ from: 'draft', to: 'paused' });
  });

  it('webhook endpoints: create, list, get, update, rotate the secret, recover, delete (deliveries: sdk-webhooks.test.ts)', async () => {
    const client = ringlane.client((await account({ reseller: false })).key);
    const endpoint = await client.webhookEndpoints.create({
      name: 'crm',
      url: 'https://hooks.example.com/ringlane',
      secret: newSecret(),
      outcomes: ['positive'],
    });
    expect(endpoint).to.include({ name: 'crm', has_secret: true, secret_rotation: null });
    expect((await client.webhookEndpoints.list()).data).to.deep.equal([endpoint]);
    expect(await client.webhookEndpoints.get(endpoint.id)).to.deep.equal(endpoint);
    expect(await client.webhookEndpoints.update(endpoint.id, { event_types: ['call.completed', 'balance.low'] })).to.deep.include({
      event_types: ['call.completed', 'balance.low'],
    });
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id, { secret: newSecret(), overlap_seconds: 600 });
    expect(rotated.secret_rotation?.previous_expires_at).to.be.a('string');
    expect(await client.webhookEndpoints.recover(endpoint.id, { since: '2026-01-01T00:00:00Z' })).to.deep.equal({
      endpoint_id: endpoint.id,
      since: '2026-01-01T00:00:00.000Z',
      status: 'accepted',
    });
    await client.webhookEndpoints.delete(endpoint.id);
    expect(await rejectionOf(client.webhookEndpoints.get(endpoint.id))).to.include({ code: 'webhook_endpoint_not_found' });
  });

  it("balance, payments, receipts, plans, add-ons, referrals and invites: the account's own areas, closed inside a tenant", async () => {
    const client = ringlane.client((await account()).key);
    expect(await client.balance.get()).to.deep.equal({ balance: '100.000000', currency: 'USD' });
    for (const page of [client.payments.list(), client.receipts.list(), client.plans.list(), client.addOns.list(), client.referrals.list()]) {
      expect(await page).to.have.all.keys('data', 'next_cursor');
    }
    const invite = await client.invites.create({ email: uniqueEmail('invitee'), capabilities: ['operate'] });
    expect((await client.invites.list()).data.map((i) => i.id)).to.deep.equal([invite.id]);
    const tenant = await client.tenants.create({ name: 'Glow Salon', timezone: 'Europe/London', industry: 'salon' });
    expect(await rejectionOf(client.forTenant(tenant.id).balance.get())).to.include({ status: 403, code: 'not_available_for_tenant' });
  });

  it('pages: await gives one page; for await walks every item of every page (the issue\'s `client.calls.list({status: "completed"})`); .pages() gives the pages', async () => {
    const client = ringlane.client((await account({ reseller: false })).key);
    const { agent, contact } = await agentAndContact(client);
    const place = (simulate: { answer?: boolean; duration_seconds: number }) => client.calls.create({ agent_id: agent.id, contact_id: contact.id, simulate });
    const completed = [];
    for (let i = 0; i < 5; i++) completed.push((await place({ duration_seconds: 1 })).id);
    const unanswered = (await place({ answer: false, duration_seconds: 0 })).id;
    await eventually(
      async () => (await client.calls.list({ limit: 100 })).data,
      (calls) => calls.every((c) => c.ended_at !== null),
      'every call ended',
    );

    const first = await client.calls.list({ status: 'completed', limit: 2 });
    expect(first.data.map((c) => c.id)).to.deep.equal(completed.slice(-2).reverse());
    expect(first.next_cursor).to.be.a('string');
    const walked: string[] = [];
    for await (const call of client.calls.list({ status: 'completed', limit: 2 })) walked.push(call.id);
    expect(walked).to.deep.equal([...completed].reverse());
    expect(walked).to.not.include(unanswered);
    const sizes: number[] = [];
    for await (const page of client.calls.list({ status: 'completed', limit: 2 }).pages()) sizes.push(page.data.length);
    expect(sizes).to.deep.equal([2, 2, 1]);
    // A page awaited first is not fetched again by the loop that follows.
    const list = client.calls.list({ limit: 4 });
    const page = await list;
    const all: string[] = [];
    for await (const call of list) all.push(call.id);
    expect(all.slice(0, 4)).to.deep.equal(page.data.map((c) => c.id));
    expect(all).to.have.length(6);
  });

  it('errors: RinglaneError with status, code, message, details, the request id and what a code adds; isRinglaneError narrows by code', async () => {
    const { sdk } = ringlane;
    const org = await account();
    const client = ringlane.client(org.key);

    const unknownTenant = await rejectionOf(client.forTenant(`ten_${'0'.repeat(22)}`).agents.list());
    expect(unknownTenant).to.be.instanceOf(sdk.RinglaneError);
    if (!sdk.isRinglaneError(unknownTenant, 'tenant_not_found', 'tenant_disabled')) throw unknownTenant;
    // Compiles only because isRinglaneError narrowed `code` to the codes it was given.
    const narrowed: 'tenant_not_found' | 'tenant_disabled' = unknownTenant.code;
    expect(narrowed).to.equal('tenant_not_found');
    expect(unknownTenant.status).to.equal(404);
    expect(unknownTenant.message).to.be.a('string').that.is.not.empty;
    expect(unknownTenant.requestId).to.match(/^[0-9a-f-]{36}$/);
    expect(sdk.isRinglaneError(unknownTenant, 'missing_capability')).to.equal(false);

    const invalid = await rejectionOf(client.tenants.create({ name: 'Nowhere', timezone: 'Mars/Olympus_Mons', industry: 'dental' }));
    if (!sdk.isRinglaneError(invalid, 'invalid_request')) throw invalid;
    expect(invalid.status).to.equal(400);
    expect(invalid.details?.map((d) => d.path)).to.deep.equal(['timezone']);

    const reader = ringlane.client((await client.apiKeys.create({ label: 'operate only', permissions: ['operate'] })).key);
    const missing = await rejectionOf(reader.tenants.create({ name: 'Blocked', timezone: 'UTC', industry: 'other' }));
    if (!sdk.isRinglaneError(missing)) throw missing;
    switch (missing.code) {
      case 'missing_capability':
        expect(missing.error.required).to.equal('settings');
        break;
      default:
        expect.fail(`expected missing_capability, got ${missing.code}`);
    }

    // The 6th key of the hour is 429 with a Retry-After of most of an hour: thrown at once, not waited for.
    for (let i = 0; i < 4; i++) await client.apiKeys.create({ label: `key ${i}`, permissions: ['operate'] });
    const limited = await rejectionOf(client.apiKeys.create({ label: 'one too many', permissions: ['operate'] }));
    expect(limited).to.include({ status: 429, code: 'rate_limited' });
    expect(Number((limited as InstanceType<typeof sdk.RinglaneError>).headers.get('retry-after'))).to.be.above(60);

    const nowhere = new sdk.Ringlane({ baseUrl: 'http://127.0.0.1:1', apiKey: org.key, maxRetries: 1 });
    const unreachable = await rejectionOf(nowhere.balance.get());
    expect(unreachable).to.be.instanceOf(sdk.RinglaneConnectionError).and.not.be.instanceOf(sdk.RinglaneError);
    expect(unreachable).to.include({ timedOut: false, method: 'GET', path: '/v1/balance' });
  });
});
