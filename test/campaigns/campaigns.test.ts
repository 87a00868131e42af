import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { app, asCaller, bearer, expectError } from '../helpers/api.js';
import { voiceOrg, waitForCampaignState, withCallsWorker, type VoiceOrg } from '../helpers/voice.js';

async function createCampaign(org: VoiceOrg, fields: Record<string, unknown> = {}) {
  return request(await app())
    .post('/v1/campaigns')
    .set('Authorization', bearer(org.key))
    .send({ name: 'Spring reminders', agent_id: org.agentId, contact_ids: org.contactIds, ...fields });
}

async function setState(org: VoiceOrg, id: string, state: string) {
  return request(await app())
    .patch(`/v1/campaigns/${id}`)
    .set('Authorization', bearer(org.key))
    .send({ state });
}

const waitForState = (org: VoiceOrg, id: string, state: string) => waitForCampaignState(asCaller(org.key), id, state);

const callsOf = (campaignId: string) =>
  db.query<Array<{ contact_id: string; status: string }>>(`SELECT contact_id, status FROM calls WHERE campaign_id = $1 ORDER BY created_at`, [campaignId]);

/** "HH:MM" in UTC, `hours` from now. */
const utcClock = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString().slice(11, 16);

describe('campaigns', function () {
  this.timeout(60_000);
  withCallsWorker();

  it('a draft campaign places no call; started, it calls every contact once through the engine and completes', async () => {
    const org = await voiceOrg({ contacts: 3 });
    const created = await createCampaign(org);
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ state: 'draft', agent_id: org.agentId });
    expect(created.body.contacts).to.deep.equal({ total: 3, pending: 3, calling: 0, done: 0, skipped: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await callsOf(created.body.id)).to.deep.equal([]);

    expect((await setState(org, created.body.id, 'running')).body.state).to.equal('running');
    const done = await waitForState(org, created.body.id, 'completed');
    expect(done.contacts).to.deep.equal({ total: 3, pending: 0, calling: 0, done: 3, skipped: 0 });
    expect(done.completed_at).to.be.a('string');
    const calls = await callsOf(created.body.id);
    expect(calls.map((c) => c.contact_id).sort()).to.deep.equal([...org.contactIds].sort());
    expect(calls.every((c) => c.status === 'completed')).to.equal(true);
  });

  it('retries no_answer contacts after the delay, up to max_retries', async () => {
    const org = await voiceOrg({ contacts: 2 });
    const created = await createCampaign(org, { simulate: { answer: false }, retry: { max_retries: 2, delay_seconds: 0 } });
    await setState(org, created.body.id, 'running');
    await waitForState(org, created.body.id, 'completed');
    const calls = await callsOf(created.body.id);
    expect(calls).to.have.lengthOf(6); // 1 + 2 retries for each of 2 contacts
    expect(calls.every((c) => c.status === 'no_answer')).to.equal(true);
  });

  it('pauses, placing no call, when the paying balance is not above zero', async () => {
    const org = await voiceOrg({ contacts: 2, fields: { balance: '0' } });
    const created = await createCampaign(org);
    expect((await setState(org, created.body.id, 'running')).body.state).to.equal('running');
    const paused = await waitForState(org, created.body.id, 'paused');
    expect(paused.contacts).to.deep.equal({ total: 2, pending: 2, calling: 0, done: 0, skipped: 0 });
    expect(await callsOf(created.body.id)).to.deep.equal([]);
  });

  it('places no call outside its calling hours', async () => {
    const org = await voiceOrg({ contacts: 2 });
    const created = await createCampaign(org, { calling_hours: { start: utcClock(2), end: utcClock(3) } });
    expect(created.body.calling_hours).to.deep.equal({ start: utcClock(2), end: utcClock(3) });
    await setState(org, created.body.id, 'running');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await callsOf(created.body.id)).to.deep.equal([]);
    const now = await request(await app())
      .get(`/v1/campaigns/${created.body.id}`)
      .set('Authorization', bearer(org.key))
      .expect(200);
    expect(now.body).to.include({ state: 'running' });
    expect(now.body.contacts.pending).to.equal(2);
  });

  it('places no call on weekdays it excludes', async () => {
    const org = await voiceOrg({ contacts: 1 });
    const today = ((new Date().getUTCDay() + 6) % 7) + 1;
    const created = await createCampaign(org, { weekdays: [(today % 7) + 1] });
    await setState(org, created.body.id, 'running');
    await new Promise((r) => setTimeout(r, 800));
    expect(await callsOf(created.body.id)).to.deep.equal([]);
  });

  it('moves draft → running ⇄ paused → completed, and refuses other moves with 409', async () => {
    const org = await voiceOrg({ contacts: 1 });
    const created = await createCampaign(org, { calling_hours: { start: utcClock(2), end: utcClock(3) } });
    const id = created.body.id;
    expectError(await setState(org, id, 'paused'), 409, 'invalid_state_transition');
    expect((await setState(org, id, 'running')).body.state).to.equal('running');
    expect((await setState(org, id, 'paused')).body.state).to.equal('paused');
    expect((await setState(org, id, 'running')).body.state).to.equal('running');
    expect((await setState(org, id, 'completed')).body.state).to.equal('completed');
    expectError(await setState(org, id, 'running'), 409, 'invalid_state_transition');
  });

  it('answers 400 for bad hours, weekdays or retry, and 404 for an unknown contact or agent', async () => {
    const org = await voiceOrg({ contacts: 1 });
    for (const [fields, path] of [
      [{ calling_hours: { start: '25:00', end: '26:00' } }, 'calling_hours.start'],
      [{ calling_hours: { start: '09:00', end: '09:00' } }, 'calling_hours'],
      [{ weekdays: [0] }, 'weekdays.0'],
      [{ retry: { max_retries: 11 } }, 'retry.max_retries'],
      [{ contact_ids: [] }, 'contact_ids'],
      [{ budget: 5 }, 'budget'],
    ] as const) {
      const error = expectError(await createCampaign(org, fields), 400, 'invalid_request');
      expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
    }
    expectError(await createCampaign(org, { contact_ids: ['con_nope'] }), 404, 'contact_not_found');
    expectError(await createCampaign(org, { agent_id: 'agt_nope' }), 404, 'agent_not_found');
    const other = await voiceOrg({ contacts: 1 });
    expectError(await createCampaign(org, { contact_ids: other.contactIds }), 404, 'contact_not_found');
  });

  it('is scoped to its organization', async () => {
    const [mine, theirs] = [await voiceOrg({ contacts: 1 }), await voiceOrg({ contacts: 1 })];
    const created = await createCampaign(mine);
    expectError(
      await request(await app())
        .get(`/v1/campaigns/${created.body.id}`)
        .set('Authorization', bearer(theirs.key)),
      404,
      'campaign_not_found',
    );
    expectError(await setState(theirs, created.body.id, 'running'), 404, 'campaign_not_found');
    const list = await request(await app())
      .get('/v1/campaigns')
      .set('Authorization', bearer(theirs.key))
      .expect(200);
    expect(list.body.data).to.deep.equal([]);
  });
});
