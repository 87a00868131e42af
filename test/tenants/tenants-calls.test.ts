import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { app, expectError, expectStatus, operator } from '../helpers/api.js';
import { startService } from '../helpers/processes.js';
import { createTenant, reseller, type Reseller } from '../helpers/tenants.js';
import { eventsOf, stopProcess, uniquePhone, waitForCalls, withCallsWorker } from '../helpers/voice.js';

/** An agent and a contact inside the tenant, made through the API with X-Tenant-Id. */
async function tenantWithContact(owner: Reseller, tenantFields: Record<string, unknown> = {}) {
  const tenant = await createTenant(owner, tenantFields);
  const inside = owner.inside(tenant.id);
  const [agent] = expectStatus(await inside.get('/v1/agents'), 200).body.data;
  const contact = expectStatus(await inside.post('/v1/contacts', { name: 'Cleo', phone_number: uniquePhone() }), 201).body;
  const place = async (simulate: object) => expectStatus(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id, simulate }), 201).body;
  const wait = (ids: string[]) => waitForCalls(owner, ids, 20_000, { 'X-Tenant-Id': tenant.id });
  return { tenant, inside, agent, contact, place, wait };
}

const resellerBalance = async (owner: Reseller) => expectStatus(await owner.as.get('/v1/balance'), 200).body.balance;

describe('calls inside tenants', function () {
  this.timeout(60_000);
  withCallsWorker();

  it('are charged to the reseller’s balance at the reseller’s rates; the tenant has no balance', async () => {
    const owner = await reseller({ balance: '10.000000', rates: { per_minute: '0.600000', per_text: '0.050000' } });
    const { inside, place, wait } = await tenantWithContact(owner);
    const call = await place({ duration_seconds: 30 });
    const [done] = await wait([call.id]);
    expect(done).to.include({ status: 'completed', charge: '0.300000' });
    expect(await resellerBalance(owner)).to.equal('9.700000');
    expectError(await inside.get('/v1/balance'), 403, 'not_available_for_tenant');
    const [entry] = await db.query(`SELECT org_id, subject_org_id, amount_micros FROM ledger_entries WHERE reference = $1`, [`call:${call.id}`]);
    expect(entry).to.deep.equal({ org_id: owner.id, subject_org_id: done.org_id, amount_micros: '-300000' });
  });

  it('an inbound call to the tenant’s number is charged to the reseller too', async () => {
    const owner = await reseller({ balance: '10.000000', rates: { per_minute: '0.600000', per_text: '0.050000' } });
    const { inside, agent, wait } = await tenantWithContact(owner);
    const number = expectStatus(await inside.post('/v1/phone-numbers', { agent_id: agent.id }), 201).body.phone_number;
    const inbound = await request(await app())
      .post('/admin/v1/simulator/inbound-calls')
      .set('Authorization', operator())
      .send({ to: number, from: uniquePhone(), simulate: { duration_seconds: 30 } });
    const [done] = await wait([expectStatus(inbound, 201).body.call.id]);
    expect(done).to.include({ direction: 'inbound', status: 'completed', charge: '0.300000', currency: 'USD' });
    expect(await resellerBalance(owner)).to.equal('9.700000');
  });

  it('is refused with 402 when the reseller’s balance is not above zero', async () => {
    const owner = await reseller({ balance: '0' });
    const { inside, agent, contact } = await tenantWithContact(owner);
    expectError(await inside.post('/v1/calls', { agent_id: agent.id, contact_id: contact.id }), 402, 'insufficient_balance');
  });

  it('texts from the tenant’s sending number, else the reseller’s, else not at all (SPEC.md §4.2)', async () => {
    const owner = await reseller();
    const { inside, place, wait } = await tenantWithContact(owner);
    const positive = { outcome: 'positive', duration_seconds: 1 };
    const textsOf = async () => expectStatus(await inside.get('/v1/messages'), 200).body.data;

    await wait([(await place(positive)).id]);
    expect(await textsOf()).to.deep.equal([]);

    const resellerNumber = expectStatus(await owner.as.post('/v1/phone-numbers', {}), 201).body.phone_number;
    expectStatus(await owner.as.put('/v1/sms-sender', { phone_number: resellerNumber }), 200);
    const second = await place(positive);
    await wait([second.id]);
    expect((await textsOf()).map((m: any) => [m.call_id, m.from, m.charge])).to.deep.equal([[second.id, resellerNumber, '0.050000']]);

    const tenantNumber = expectStatus(await inside.post('/v1/phone-numbers', {}), 201).body.phone_number;
    expectStatus(await inside.put('/v1/sms-sender', { phone_number: tenantNumber }), 200);
    expect(expectStatus(await inside.get('/v1/sms-sender'), 200).body).to.deep.equal({ phone_number: tenantNumber });
    const third = await place(positive);
    await wait([third.id]);
    expect((await textsOf())[0]).to.include({ call_id: third.id, from: tenantNumber });
  });

  describe('disabling a tenant, with a running tenants worker', () => {
    let tenantsWorker: ChildProcess;
    before(async () => {
      tenantsWorker = (await startService('tenants')).child;
    });
    after(async () => {
      await stopProcess(tenantsWorker);
    });

    it('cancels queued calls uncharged, hangs up calls in progress charged up to the moment, pauses campaigns; its numbers stop answering', async () => {
      const owner = await reseller({ balance: '50.000000', rates: { per_minute: '6.000000', per_text: '0.050000' } });
      const { tenant, inside, agent, contact, place, wait } = await tenantWithContact(owner);
      expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { max_concurrent_calls: 1 }), 200);
      const number = expectStatus(await inside.post('/v1/phone-numbers', { agent_id: agent.id }), 201).body.phone_number;
      const talking = await place({ duration_seconds: 14_400 }); // far longer than the test
      const waiting = await place({ duration_seconds: 5 });
      const campaign = expectStatus(await inside.post('/v1/campaigns', { name: 'Recall', agent_id: agent.id, contact_ids: [contact.id] }), 201).body;
      expectStatus(await inside.patch(`/v1/campaigns/${campaign.id}`, { state: 'running' }), 200);
      for (let i = 0; ; i++) {
        const [row] = await db.query('SELECT status FROM calls WHERE id = $1', [talking.id]);
        if (row.status === 'in_progress') break;
        if (i > 400) throw new Error('never in progress');
        await new Promise((r) => setTimeout(r, 25));
      }
      await new Promise((r) => setTimeout(r, 300));

      expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 200);
      const [{ disabled_at: disabledAt }] = await db.query('SELECT disabled_at FROM organizations WHERE id = $1', [tenant.id]);
      const [hungUp, canceled] = await wait([talking.id, waiting.id]);

      expect(canceled).to.include({ status: 'canceled', end_reason: 'tenant_disabled', charge: '0.000000', duration_seconds: 0 });
      expect(hungUp).to.include({ status: 'canceled', end_reason: 'tenant_disabled', ended_at: disabledAt.toISOString() });
      const talked = Math.ceil((disabledAt.getTime() - new Date(hungUp.started_at).getTime()) / 1000);
      expect(hungUp.duration_seconds).to.equal(talked);
      expect(hungUp.charge).to.equal((talked * 0.1).toFixed(6)); // 6.00 per minute = 0.10 per second
      const last = (await eventsOf(talking.id)).pop()!;
      expect(last.payload).to.include({ event: 'call.completed', status: 'canceled', end_reason: 'tenant_disabled' });

      const state = expectStatus(await inside.get(`/v1/campaigns/${campaign.id}`), 200).body.state;
      expect(state).to.equal('paused');
      const inbound = await request(await app())
        .post('/admin/v1/simulator/inbound-calls')
        .set('Authorization', operator())
        .send({ to: number, from: uniquePhone() });
      expectError(inbound, 409, 'number_not_answering');
      const charges = await db.query(`SELECT reference FROM ledger_entries WHERE subject_org_id = $1 AND kind = 'call'`, [tenant.id]);
      expect(charges.map((c: any) => c.reference)).to.deep.equal([`call:${talking.id}`]);

      // Re-enabled, it resumes: calls can be placed again.
      expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: false }), 200);
      const again = await place({ duration_seconds: 1 });
      expect((await wait([again.id]))[0].status).to.equal('completed');
    });
  });
});
