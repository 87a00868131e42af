import { UnrecoverableError } from 'bullmq';
import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { createOrg, expectStatus } from '../helpers/api.js';
import { redisForTests } from '../helpers/redis.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { uniquePhone } from '../helpers/voice.js';

describe('a disabled tenant’s effects, without a tenants worker (TenantEffects)', () => {
  let runtime: Runtime;
  before(() => {
    runtime = createRuntime({ db, redis: redisForTests() });
  });
  after(() => runtime.close());

  it('the sweep makes up a lost apply-state: calls not yet ended end canceled, running campaigns pause', async () => {
    const owner = await reseller();
    const tenant = await createTenant(owner);
    const inside = owner.inside(tenant.id);
    const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
    const contact = expectStatus(await inside.post('/v1/contacts', { name: 'Cleo', phone_number: uniquePhone() }), 201).body;
    // No calls worker runs: the call stays queued, the campaign running.
    const call = expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id }), 201).body;
    const campaign = expectStatus(await inside.post('/v1/campaigns', { name: 'Recall', agent_id: agent.id, contact_ids: [contact.id] }), 201).body;
    expectStatus(await inside.patch(`/v1/campaigns/${campaign.id}`, { state: 'running' }), 200);
    // Its apply-state job waits in the queue: no tenants worker runs either.
    expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 200);

    await runtime.services.tenantEffects.sweep();
    expect(expectStatus(await inside.get(`/v1/calls/${call.id}`), 200).body).to.include({
      status: 'canceled',
      end_reason: 'tenant_disabled',
      charge: '0.000000',
    });
    expect(expectStatus(await inside.get(`/v1/campaigns/${campaign.id}`), 200).body.state).to.equal('paused');
    expect(await runtime.services.tenantEffects.apply(tenant.id)).to.deep.equal({ paused: 0, ended: 0 });
  });

  it('apply-state for an enabled tenant does nothing; for an id that is no tenant’s it fails for good (not retried)', async () => {
    const owner = await reseller();
    const tenant = await createTenant(owner);
    expect(await runtime.services.tenantEffects.apply(tenant.id)).to.deep.equal({ paused: 0, ended: 0 });
    for (const id of ['ten_nobody', (await createOrg()).id, owner.id]) {
      const failure = await runtime.services.tenantEffects.apply(id).then(
        () => null,
        (err: unknown) => err,
      );
      expect(failure, id).to.be.instanceOf(UnrecoverableError);
    }
  });
});
