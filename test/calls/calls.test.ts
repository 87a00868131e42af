import { expect } from 'chai';
import request from 'supertest';
import { CALL_EVENT_FIELDS } from '../../src/calls/call-event.entity.js';
import { db } from '../helpers/db.js';
import { createRedis } from '../../src/lib/redis.js';
import { app, appOver, bearer, expectError, operator } from '../helpers/api.js';
import { unreachableRedis } from '../helpers/redis.js';
import { balanceOf, eventsOf, placeCall, uniquePhone, voiceOrg, waitForCalls, withCallsWorker, type VoiceOrg } from '../helpers/voice.js';

describe('calls on the simulated carrier (CONTRACT.md "Calls")', function () {
  this.timeout(60_000);
  withCallsWorker();

  describe('lifecycle and events', () => {
    let org: VoiceOrg;
    before(async () => {
      org = await voiceOrg();
    });

    it('POST /v1/calls answers 201 at once with the call queued', async () => {
      const call = await placeCall(org, { duration_seconds: 1 });
      expect(call).to.include({ status: 'queued', direction: 'outbound', agent_id: org.agentId, contact_id: org.contactIds[0], campaign_id: null });
      expect(call.id).to.match(/^call_/);
      await waitForCalls(org, [call.id]);
    });

    it('Redis away as the call is committed: 201 with the call queued (not a 500 a client would retry into a second call), and the sweeper brings it through', async function () {
      this.timeout(60_000);
      const deadRedis = createRedis('command', unreachableRedis().target);
      deadRedis.on('error', () => undefined);
      const lonely = appOver({ redis: deadRedis });
      try {
        const res = await request(lonely.app)
          .post('/v1/calls')
          .set('Authorization', bearer(org.key))
          .send({ agent_id: org.agentId, contact_id: org.contactIds[0], simulate: { duration_seconds: 1 } });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body).to.include({ status: 'queued' });
        const rows = await db.query('SELECT count(*)::int AS n FROM calls WHERE org_id = $1 AND id = $2', [org.id, res.body.id]);
        expect(rows[0].n, 'exactly the one call').to.equal(1);
        // Never handed to the engine: the calls worker's sweeper admits it from Postgres.
        const [call] = await waitForCalls(org, [res.body.id], 45_000);
        expect(call.status).to.equal('completed');
      } finally {
        await lonely.close();
        deadRedis.disconnect();
      }
    });

    it('an answered call: queued, ringing, in_progress, completed with sequence 1–4 and every SPEC.md §6.1 field', async () => {
      const placed = await placeCall(org, { answer: true, duration_seconds: 60, outcome: 'negative' });
      const [call] = await waitForCalls(org, [placed.id]);
      expect(call).to.include({ status: 'completed', end_reason: 'completed', outcome: 'negative', duration_seconds: 60 });
      const events = await eventsOf(placed.id);
      expect(events.map((e) => e.event)).to.deep.equal(['call.queued', 'call.ringing', 'call.in_progress', 'call.completed']);
      expect(events.map((e) => e.sequence)).to.deep.equal([1, 2, 3, 4]);
      expect(events.map((e) => e.payload.status)).to.deep.equal(['queued', 'ringing', 'in_progress', 'completed']);
      for (const e of events) {
        expect(e.payload).to.have.all.keys(CALL_EVENT_FIELDS);
        expect(e.payload.occurred_at).to.equal(e.occurred_at.toISOString());
        expect(e.payload.sequence).to.equal(e.sequence);
      }
      const times = events.map((e) => e.occurred_at.getTime());
      expect([...times].sort((a, b) => a - b)).to.deep.equal(times);
      const last = events[3].payload;
      expect(last).to.include({
        call_id: placed.id,
        org_id: org.id,
        direction: 'outbound',
        duration_seconds: 60,
        end_reason: 'completed',
        outcome: 'negative',
        campaign_id: null,
      });
      expect(last.started_at).to.equal(events[2].payload.occurred_at);
      expect(last.ended_at).to.equal(last.occurred_at);
      expect(last.phone_number).to.match(/^\+\d+$/);
    });

    it('an unanswered call rings, then ends no_answer, uncharged', async () => {
      const placed = await placeCall(org, { answer: false });
      const [call] = await waitForCalls(org, [placed.id]);
      expect(call).to.include({ status: 'no_answer', end_reason: 'no_answer', duration_seconds: 0, charge: '0.000000' });
      const events = await eventsOf(placed.id);
      expect(events.map((e) => [e.event, e.payload.status])).to.deep.equal([
        ['call.queued', 'queued'],
        ['call.ringing', 'ringing'],
        ['call.completed', 'no_answer'],
      ]);
    });

    it('a busy call never rings: queued, then completed with status busy', async () => {
      const placed = await placeCall(org, { answer: 'busy' });
      const [call] = await waitForCalls(org, [placed.id]);
      expect(call).to.include({ status: 'busy', end_reason: 'busy' });
      const events = await eventsOf(placed.id);
      expect(events.map((e) => [e.sequence, e.event, e.payload.status])).to.deep.equal([
        [1, 'call.queued', 'queued'],
        [2, 'call.completed', 'busy'],
      ]);
    });

    it('lists calls newest first and reads one; another organization sees none of them', async () => {
      const list = await request(await app())
        .get('/v1/calls?limit=2')
        .set('Authorization', bearer(org.key))
        .expect(200);
      expect(list.body.data).to.have.lengthOf(2);
      expect(list.body.next_cursor).to.be.a('string');
      const other = await voiceOrg();
      const theirs = await request(await app())
        .get('/v1/calls')
        .set('Authorization', bearer(other.key))
        .expect(200);
      expect(theirs.body.data).to.deep.equal([]);
      expectError(
        await request(await app())
          .get(`/v1/calls/${list.body.data[0].id}`)
          .set('Authorization', bearer(other.key)),
        404,
        'call_not_found',
      );
    });
  });

  describe('bad input and refusals', () => {
    it('400 for a bad simulate object, missing ids and unknown fields', async () => {
      const org = await voiceOrg();
      for (const [body, path] of [
        [{ agent_id: org.agentId, contact_id: org.contactIds[0], simulate: { answer: 'maybe' } }, 'simulate.answer'],
        [{ agent_id: org.agentId, contact_id: org.contactIds[0], simulate: { duration_seconds: -1 } }, 'simulate.duration_seconds'],
        [{ agent_id: org.agentId, contact_id: org.contactIds[0], simulate: { outcome: 'great' } }, 'simulate.outcome'],
        [{ contact_id: org.contactIds[0] }, 'agent_id'],
        [{ agent_id: org.agentId, contact_id: org.contactIds[0], priority: 1 }, 'priority'],
      ] as const) {
        const res = await request(await app())
          .post('/v1/calls')
          .set('Authorization', bearer(org.key))
          .send(body);
        const error = expectError(res, 400, 'invalid_request');
        expect(error.details.map((d: { path: string }) => d.path)).to.include(path);
      }
    });

    it('404 for an agent or contact of another organization', async () => {
      const [mine, theirs] = [await voiceOrg(), await voiceOrg()];
      const post = async (body: object) =>
        request(await app())
          .post('/v1/calls')
          .set('Authorization', bearer(mine.key))
          .send(body);
      expectError(await post({ agent_id: theirs.agentId, contact_id: mine.contactIds[0] }), 404, 'agent_not_found');
      expectError(await post({ agent_id: mine.agentId, contact_id: theirs.contactIds[0] }), 404, 'contact_not_found');
    });

    it('402 insufficient_balance when the balance is not above zero, and nothing is written', async () => {
      const org = await voiceOrg({ fields: { balance: '0' } });
      const res = await request(await app())
        .post('/v1/calls')
        .set('Authorization', bearer(org.key))
        .send({ agent_id: org.agentId, contact_id: org.contactIds[0] });
      expectError(res, 402, 'insufficient_balance');
      expect(await db.query('SELECT id FROM calls WHERE org_id = $1', [org.id])).to.deep.equal([]);
    });

    it('403 missing_capability without operate', async () => {
      const org = await voiceOrg();
      const key = await request(await app())
        .post('/v1/api-keys')
        .set('Authorization', bearer(org.key))
        .send({ label: 'ro', permissions: ['settings'] })
        .expect(201);
      const res = await request(await app())
        .post('/v1/calls')
        .set('Authorization', bearer(key.body.key))
        .send({ agent_id: org.agentId, contact_id: org.contactIds[0] });
      expect(expectError(res, 403, 'missing_capability').required).to.equal('operate');
    });
  });

  describe('billing', () => {
    it('charges each call per started second at per_minute, once; the balance is the ledger, to the micro', async () => {
      const org = await voiceOrg({ contacts: 1, fields: { balance: '10.000000', rates: { per_minute: '0.130000', per_text: '0.010000' } } });
      const durations = [1, 7, 59, 60, 61, 0];
      const placed = [];
      for (const duration_seconds of durations) placed.push(await placeCall(org, { duration_seconds }));
      const calls = await waitForCalls(
        org,
        placed.map((c) => c.id),
      );
      // 0.13 per minute = 2166.67 micros per second, rounded up per call.
      const expected = durations.map((s) => (BigInt(s) * 130_000n + 59n) / 60n);
      expect(calls.map((c) => c.charge)).to.deep.equal(expected.map((m) => `0.${m.toString().padStart(6, '0')}`));
      const total = expected.reduce((a, b) => a + b, 0n);
      expect(await balanceOf(org)).to.equal(`9.${(1_000_000n - total).toString().padStart(6, '0')}`);
      const [ledger] = await db.query(`SELECT count(*)::int AS n, sum(amount_micros)::bigint AS sum FROM ledger_entries WHERE org_id = $1 AND kind = 'call'`, [
        org.id,
      ]);
      expect(ledger.n).to.equal(durations.filter((s) => s > 0).length);
      expect(BigInt(ledger.sum)).to.equal(-total);
    });
  });

  describe('texts after a positive call (SPEC.md §4.2)', () => {
    it('texts one confirmation from the sending number, charged per_text; none without a sender', async () => {
      const org = await voiceOrg();
      const api = await app();
      const noSender = await placeCall(org, { outcome: 'positive', duration_seconds: 1 });
      await waitForCalls(org, [noSender.id]);
      const number = await request(api).post('/v1/phone-numbers').set('Authorization', bearer(org.key)).send({}).expect(201);
      await request(api).put('/v1/sms-sender').set('Authorization', bearer(org.key)).send({ phone_number: number.body.phone_number }).expect(200);
      const before = await balanceOf(org);
      const positive = await placeCall(org, { outcome: 'positive', duration_seconds: 0 });
      const neutral = await placeCall(org, { outcome: 'neutral', duration_seconds: 0 });
      await waitForCalls(org, [positive.id, neutral.id]);
      const messages = (await request(api).get('/v1/messages').set('Authorization', bearer(org.key)).expect(200)).body.data;
      expect(messages).to.have.lengthOf(1);
      expect(messages[0]).to.include({ call_id: positive.id, from: number.body.phone_number, to: positive.phone_number, charge: '0.010000' });
      expect(await balanceOf(org)).to.equal((Number(before) - 0.01).toFixed(6));
    });
  });

  describe('inbound calls (simulator row of CONTRACT.md §3)', () => {
    it('a call to one of the organization’s numbers is answered by the number’s agent', async () => {
      const org = await voiceOrg();
      const api = await app();
      const number = await request(api).post('/v1/phone-numbers').set('Authorization', bearer(org.key)).send({ agent_id: org.agentId }).expect(201);
      const from = uniquePhone();
      const res = await request(api)
        .post('/admin/v1/simulator/inbound-calls')
        .set('Authorization', operator())
        .send({ to: number.body.phone_number, from, simulate: { duration_seconds: 30 } })
        .expect(201);
      expect(res.body.call).to.include({ direction: 'inbound', agent_id: org.agentId, org_id: org.id, phone_number: from });
      const [call] = await waitForCalls(org, [res.body.call.id]);
      expect(call).to.include({ status: 'completed', duration_seconds: 30, charge: '0.060000' });
      expect((await eventsOf(call.id)).map((e) => e.event)).to.deep.equal(['call.queued', 'call.ringing', 'call.in_progress', 'call.completed']);
    });

    it('404 for a number nobody has; 409 number_not_answering for a number without an agent', async () => {
      const org = await voiceOrg();
      const api = await app();
      const inbound = (to: string) => request(api).post('/admin/v1/simulator/inbound-calls').set('Authorization', operator()).send({ to, from: uniquePhone() });
      expectError(await inbound('+19995550000'), 404, 'phone_number_not_found');
      const number = await request(api).post('/v1/phone-numbers').set('Authorization', bearer(org.key)).send({}).expect(201);
      expectError(await inbound(number.body.phone_number), 409, 'number_not_answering');
    });
  });
});
