import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { app, asCaller, expectStatus, operator, type Caller } from '../helpers/api.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { maxOverlap, placeCall, spans, uniquePhone, voiceOrg, waitForCalls, waitForCampaignState, withCallsWorker } from '../helpers/voice.js';

/** Runs a campaign to its end; returns its calls as `GET /v1/calls` shows them. */
async function runCampaign(caller: Caller, campaignId: string): Promise<any[]> {
  expectStatus(await caller.patch(`/v1/campaigns/${campaignId}`, { state: 'running' }), 200);
  await waitForCampaignState(caller, campaignId, 'completed', 60_000);
  return expectStatus(await caller.get(`/v1/calls?campaign_id=${campaignId}&limit=100`), 200).body.data;
}

// A campaign places its calls itself and `POST /v1/calls` places them in one statement: both
// must read an organization's limits and its outgoing number the same way.
describe('campaign calls and API calls follow the same rules', function () {
  this.timeout(90_000);
  withCallsWorker();

  it('a reseller lowering its ceiling below a tenant’s limit caps the tenant’s campaign as it caps its API calls', async () => {
    const owner = await reseller({ ceiling: { max_concurrent_calls: 10, max_calls_per_hour: 1000 } });
    const tenant = await createTenant(owner);
    const inside = owner.inside(tenant.id);
    expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_concurrent_calls: 5 }), 200);
    await request(await app())
      .patch(`/admin/v1/orgs/${owner.id}`)
      .set('Authorization', operator())
      .send({ ceiling: { max_concurrent_calls: 2 } })
      .expect(200);
    expect(expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/limits`), 200).body).to.deep.include({ max_concurrent_calls: 2 });

    const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
    const contactIds: string[] = [];
    for (let i = 0; i < 6; i++)
      contactIds.push(expectStatus(await inside.post('/v1/contacts', { name: `Contact ${i}`, phone_number: uniquePhone() }), 201).body.id);
    const simulate = { duration_seconds: 100 };
    const campaign = expectStatus(await inside.post('/v1/campaigns', { name: 'Recall', agent_id: agent.id, contact_ids: contactIds, simulate }), 201).body;
    const [campaignCalls, placed] = await Promise.all([
      runCampaign(inside, campaign.id),
      Promise.all(
        contactIds
          .slice(0, 3)
          .map(async (contactId) => expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contactId, simulate }), 201).body.id),
      ),
    ]);
    expect(campaignCalls).to.have.lengthOf(6);
    await waitForCalls(owner, placed, 40_000, { 'X-Tenant-Id': tenant.id });

    // CONTRACT.md "Limits", over the tenant's calls from both paths.
    expect(maxOverlap(await spans([...campaignCalls.map((c) => c.id), ...placed], 'call.ringing', 'call.completed'))).to.equal(2);
    // The campaign places as many calls as the limit in force allows, not as many as the
    // tenant's own (higher) limit: it never has more calls waiting or under way than 2.
    expect(
      maxOverlap(
        await spans(
          campaignCalls.map((c) => c.id),
          'call.queued',
          'call.completed',
        ),
      ),
    ).to.equal(2);
  });

  it('a campaign’s calls and an API call go out from the same number: the oldest of the agent’s', async () => {
    const org = await voiceOrg({ contacts: 3 });
    const as = asCaller(org.key);
    const oldest = expectStatus(await as.post('/v1/phone-numbers', { agent_id: org.agentId }), 201).body;
    const campaign = expectStatus(await as.post('/v1/campaigns', { name: 'Recall', agent_id: org.agentId, contact_ids: org.contactIds }), 201).body;
    const newer = expectStatus(await as.post('/v1/phone-numbers', { agent_id: org.agentId }), 201).body;
    expect(newer.created_at > oldest.created_at, 'the second number is provisioned later').to.equal(true);
    // Re-assigning the oldest number rewrites its row, and with the statistics autovacuum keeps
    // in production Postgres reads a table this small in storage order: a read that does not
    // ask for the oldest now finds the newer number first.
    expectStatus(await as.patch(`/v1/phone-numbers/${oldest.id}`, { agent_id: org.agentId }), 200);
    await db.query('ANALYZE phone_numbers');

    const campaignCalls = await runCampaign(as, campaign.id);
    const [apiCall] = await waitForCalls(org, [(await placeCall(org, { duration_seconds: 1 })).id]);
    expect([...campaignCalls, apiCall].map((c) => c.from)).to.deep.equal(Array(4).fill(oldest.phone_number));
  });
});
