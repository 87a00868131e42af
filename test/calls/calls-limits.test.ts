import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import { app, bearer } from '../helpers/api.js';
import { eventsOf, maxOverlap, placeCall, spans, startCallsWorker, stopProcess, voiceOrg, waitForCalls } from '../helpers/voice.js';

describe('outbound limits across calls workers (CONTRACT.md "Limits")', function () {
  this.timeout(90_000);
  const workers: ChildProcess[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => stopProcess(w, 'SIGKILL')));
  });

  it('20 simultaneous calls with 2 workers: never more than max_concurrent_calls ringing or in progress', async () => {
    workers.push(await startCallsWorker(), await startCallsWorker());
    const org = await voiceOrg({ contacts: 20, fields: { ceiling: { max_concurrent_calls: 3, max_calls_per_hour: 1000 } } });
    const api = await app();
    const responses = await Promise.all(
      org.contactIds.map((contactId) =>
        request(api)
          .post('/v1/calls')
          .set('Authorization', bearer(org.key))
          .send({ agent_id: org.agentId, contact_id: contactId, simulate: { duration_seconds: 15 } }),
      ),
    );
    expect(responses.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    const calls = await waitForCalls(
      org,
      responses.map((r) => r.body.id),
      60_000,
    );
    expect(calls.every((c) => c.status === 'completed')).to.equal(true);
    const intervals = await spans(
      calls.map((c) => c.id),
      'call.ringing',
      'call.completed',
    );
    expect(maxOverlap(intervals)).to.be.at.most(3);
    // Calls did wait for a slot: some call started ringing only after another had ended.
    const firstEnd = Math.min(...intervals.map(([, end]) => end));
    expect(
      intervals.some(([start]) => start >= firstEnd),
      'calls queued behind the limit',
    ).to.equal(true);
  });

  it('no more than max_calls_per_hour start in a rolling hour; the rest wait queued', async () => {
    workers.push(await startCallsWorker());
    const org = await voiceOrg({ contacts: 1, fields: { ceiling: { max_concurrent_calls: 10, max_calls_per_hour: 4 } } });
    const placed = [];
    for (let i = 0; i < 6; i++) placed.push(await placeCall(org, { duration_seconds: 1 }));
    await waitForCalls(
      org,
      placed.slice(0, 4).map((c) => c.id),
    );
    await new Promise((r) => setTimeout(r, 1000));
    const rows = await db.query(`SELECT status, count(*)::int AS n FROM calls WHERE org_id = $1 GROUP BY status ORDER BY status`, [org.id]);
    expect(rows).to.deep.equal([
      { status: 'completed', n: 4 },
      { status: 'queued', n: 2 },
    ]);
  });

  it('a calls worker killed mid-call loses nothing: another finishes the call, charged once', async () => {
    const first = await startCallsWorker();
    workers.push(first);
    const org = await voiceOrg({ fields: { rates: { per_minute: '0.600000', per_text: '0' } } });
    const placed = await placeCall(org, { duration_seconds: 1500 }); // 3 s of real time at SIM_SECOND_MS=2
    for (let i = 0; ; i++) {
      const [row] = await db.query('SELECT status FROM calls WHERE id = $1', [placed.id]);
      if (row.status === 'in_progress') break;
      if (i > 200) throw new Error(`call never went in progress: ${row.status}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await stopProcess(first, 'SIGKILL');
    workers.push(await startCallsWorker());
    const [call] = await waitForCalls(org, [placed.id], 30_000);
    expect(call).to.include({ status: 'completed', duration_seconds: 1500, charge: '15.000000' });
    expect((await eventsOf(placed.id)).map((e) => `${e.sequence}:${e.event}`)).to.deep.equal([
      '1:call.queued',
      '2:call.ringing',
      '3:call.in_progress',
      '4:call.completed',
    ]);
    const ledger = await db.query(`SELECT amount_micros FROM ledger_entries WHERE reference = $1`, [`call:${placed.id}`]);
    expect(ledger).to.deep.equal([{ amount_micros: '-15000000' }]);
  });
});
