// The SQL that runs is written down (docs/sql/*.sql): the hot statements, as Postgres receives
// them from a call placed, dialed and ended and its events relayed, claimed and recorded. This
// test fails when one changes without its file; `npm run docs:sql` (UPDATE_SQL=1) rewrites them.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { expect } from 'chai';
import type pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { LedgerRepository } from '../../src/billing/ledger.repository.js';
import { CallsRepository } from '../../src/calls/calls.repository.js';
import { CallEngine } from '../../src/calls/engine.js';
import { retainedHistory } from '../../src/history/history-partitions.js';
import { OrganizationsRepository } from '../../src/orgs/organizations.repository.js';
import type { RinglaneApp } from '../../src/app.js';
import type { Runtime } from '../../src/runtime.js';
import { createRelay } from '../../src/runtime.js';
import { AttemptsRepository, type RecordedAttempt } from '../../src/webhooks/attempts.repository.js';
import { DeliveryClaimsRepository } from '../../src/webhooks/delivery-claims.repository.js';
import type { DeliveryTarget } from '../../src/webhooks/delivery-request.js';
import { OutboxRepository } from '../../src/webhooks/outbox.repository.js';
import { Relay } from '../../src/webhooks/relay.js';
import { appOver, asCaller, bearer, expectStatus } from '../helpers/api.js';
import { db } from '../helpers/db.js';
import { StatementLog, type Class, type SentStatement } from '../helpers/statements.js';
import { voiceOrg, type VoiceOrg } from '../helpers/voice.js';

const DIR = new URL('../../docs/sql/', import.meta.url);
const UPDATE = process.env.UPDATE_SQL === '1';

/** A file of docs/sql: what runs inside `owner` (and inside no other file's owner), each statement once, in the order first run. */
interface SqlFile {
  file: string;
  owner: [Class, string];
  /** The header: what runs, and what the $n parameters are. */
  about: string;
}

const FILES: SqlFile[] = [
  {
    file: 'call-place',
    owner: [CallsRepository, 'placeOutbound'],
    about: `POST /v1/calls places a call in one statement (CallsRepository.placeOutbound). $1 the
      organization, $2 the agent, $3 the contact, $4 the campaign (null: none), $5 the new call's id,
      $6 the simulated script, $7 its created_at, $8 its call.queued event's id, $9 and $10 the bounds of
      the calendar month whose charges a tenant's monthly spend limit caps (read only for a tenant with one).`,
  },
  {
    file: 'call-dispatch',
    owner: [CallEngine, 'dispatch'],
    about: `CallEngine.dispatch (the calls worker's dispatch job) admits the waiting calls of every
      organization whose dispatch was requested, each within its limits (in Redis), and dials them as
      one batch (CallEngine.dial). The organizations' limits, their resellers' ceilings, their carriers
      and whether each has a monthly spend limit ($1 their ids); the calls to a number on a do-not-call
      list, then the calls locked by id and marked dialed, with one dial time for the batch ($1 the
      calls). (A tenant with a spend limit: its calls locked, its row locked, and its calls marked
      dialed only while its month's charges are below the limit, in one transaction:
      src/tenants/spend-limit.ts.)`,
  },
  {
    file: 'call-report',
    owner: [CallEngine, 'applyReport'],
    about: `CallEngine.applyReport (the calls worker's report job): the carrier reports ringing, then the
      answer (its report of the end: call-end.sql). Each status change is one statement that locks
      the calls by id, changes them and writes their events: $1 the calls, $2 each one's time, $3
      each one's event id. The answer first catches up calls still queued ($1 the calls).`,
  },
  {
    file: 'call-end',
    owner: [CallEngine, 'end'],
    about: `CallEngine.end ends calls in one transaction (here, the carrier's report of a completed
      call). The calls locked, then those still queued ($1 the calls); the organizations and payers
      ($1... their ids, a parameter each); the ending with each call.completed event ($1 the calls,
      $2 times, $3 event ids, $4 statuses, $5 end reasons, $6 durations, $7 charges, $8 billable
      amounts); the charge (one ledger line, $1-$7 its columns); the balance.low rule ($1 the payers).`,
  },
  {
    file: 'relay-batch',
    owner: [Relay, 'batch'],
    about: `Relay.batch (the relay process): the oldest event not relayed (looked up every 10 s), then
      one transaction: up to 500 events not relayed locked ($1, $2 the outbox range of created_at),
      matched to endpoints, a tenant's also to its reseller's reseller-wide ones ($1 the events, $2, $3
      their span of created_at, $4 the call event types), fanned out to deliveries ($1 new delivery
      ids, $2 events, $3 endpoints, $4 the endpoints' organizations, $5, $6 the span), the
      webhooks workers notified ($1 the channel, $2 the endpoints), the events marked relayed ($1 the
      events, $2, $3 the span).`,
  },
  {
    file: 'webhook-open-range',
    owner: [DeliveryClaimsRepository, 'openRange'],
    about: `DeliveryClaimsRepository.openRange (each dispatcher scan, every 500 ms): the first retained
      day holding an open delivery. $1 the days' starts, $2 the next days' starts.`,
  },
  {
    file: 'webhook-open-endpoints',
    owner: [DeliveryClaimsRepository, 'openEndpoints'],
    about: `DeliveryClaimsRepository.openEndpoints (each dispatcher scan): the endpoints with open
      deliveries, in id order. $1 the id to start after, $2 how many at most, $3, $4 the open range of
      created_at.`,
  },
  {
    file: 'webhook-claim-due',
    owner: [DeliveryClaimsRepository, 'claimDue'],
    about: `DeliveryClaimsRepository.claimDue: the dispatcher's claim of due deliveries of endpoints
      without a rate limit. $1 the endpoints, $2 each one's quota, $3 the lease in seconds, $4, $5 the
      open range of created_at.`,
  },
  {
    file: 'webhook-claim-paced',
    owner: [DeliveryClaimsRepository, 'claimPaced'],
    about: `DeliveryClaimsRepository.claimPaced: the dispatcher's claim of due deliveries of rate-limited
      endpoints, with their send slots. $1 the endpoints, $2 each one's quota, $3 the lease in seconds,
      $4, $5 the open range of created_at, $6 the pacing horizon in seconds, $7 the seconds that
      rate successive slots span (1.05: one second plus the 50 ms a send may run late).`,
  },
  {
    file: 'webhook-record-attempts',
    owner: [AttemptsRepository, 'record'],
    about: `AttemptsRepository.record (the attempt recorder, a batch at a time). $1-$10 the attempts,
      column by column (delivery, its created_at, attempt id, time, response status, duration, error,
      response body, the delivery's new status, its next attempt); $11, $12 the batch's span of
      created_at; $13 the endpoints with a success; $14-$16, $18, $19 those failing (ids, streak
      start, 410 Gone, last error, the event id should it be disabled); $17 how long a streak
      disables (seconds). Then, when it disabled endpoints, pauseOrResume ($1 those endpoints).`,
  },
];

/** Methods that name the statements they send inside a file of several. */
const INNER: Array<[Class, string]> = [
  [CallsRepository, 'barredAmong'],
  [CallsRepository, 'markDialed'],
  [CallsRepository, 'orgsOf'],
  [CallsRepository, 'markRinging'],
  [CallsRepository, 'catchUpRinging'],
  [CallsRepository, 'markInProgress'],
  [CallsRepository, 'lockOpen'],
  [CallsRepository, 'markEnded'],
  [OrganizationsRepository, 'dialingOf'],
  [OrganizationsRepository, 'byIds'],
  [LedgerRepository, 'append'],
  [LedgerRepository, 'reportLowBalances'],
  [OutboxRepository, 'oldestUnrelayed'],
  [OutboxRepository, 'lockUnrelayed'],
  [OutboxRepository, 'matchingEndpoints'],
  [OutboxRepository, 'fanOut'],
  [OutboxRepository, 'markRelayed'],
];

const SCENARIO = `As Postgres received them for one call placed, dialed, answered and completed, and its
  events relayed, claimed and attempted: test/sql/hot-statements.test.ts (trailing spaces trimmed).
  \`npm run docs:sql\` rewrites this file.`;

/** `text` as comment lines of at most 100 columns. */
function comment(text: string): string[] {
  const lines: string[] = [];
  for (const word of text.match(/`[^`]*`\S*|\S+/g) ?? []) {
    if (lines.length && `${lines[lines.length - 1]} ${word}`.length <= 100) lines[lines.length - 1] += ` ${word}`;
    else lines.push(`-- ${word}`);
  }
  return lines;
}

/** The text of a file: its header, then each statement once, named by its method when that is not the file's owner. */
function render(file: SqlFile, owner: string, sent: SentStatement[]): string {
  const seen = new Set<string>();
  const parts = [[...comment(file.about), '--', ...comment(SCENARIO)].join('\n')];
  for (const { text, owners } of sent) {
    const sql = text
      .replace(/[ \t]+$/gm, '')
      .replace(/^\s*\n/, '')
      .trimEnd();
    if (seen.has(sql)) continue;
    seen.add(sql);
    const by = owners[owners.length - 1];
    parts.push(`${by === owner ? '' : `-- ${by}\n`}${sql};`);
  }
  return `${parts.join('\n\n')}\n`;
}

describe('the hot statements as they run (docs/sql)', function () {
  this.timeout(60_000);
  const log = new StatementLog();
  let dataSource: DataSource;
  let pool: pg.Pool;
  let ringlane: RinglaneApp & { runtime: Runtime };
  let org: VoiceOrg;
  let callId: string;
  const endpoints = { plain: '', paced: '' };
  const rendered = new Map<string, string>();
  const sqlFiles = () => (existsSync(DIR) ? readdirSync(DIR).filter((name) => name.endsWith('.sql')) : []);

  before(async () => {
    org = await voiceOrg();
    const caller = asCaller(org.key);
    const endpoint = async (fields: object) =>
      expectStatus(
        await caller.post('/v1/webhook-endpoints', { name: 'SQL', url: 'http://127.0.0.1:9/hooks', secret: 'a-secret-value', outcomes: [], ...fields }),
        201,
      ).body.id;
    endpoints.plain = await endpoint({});
    endpoints.paced = await endpoint({ rate_limit_per_second: 1000 });
    // Events of earlier tests relayed first, so that the relay's batch below holds this test's alone.
    while ((await createRelay(db).batch()) > 0);

    dataSource = await log.dataSource();
    pool = log.pool();
    ringlane = appOver({ db: dataSource });
    const owners = new Map(FILES.map((f) => [log.own(...f.owner), f]));
    for (const [klass, method] of INNER) log.own(klass, method);

    await runScenario();

    // Each statement belongs to the file of the innermost owner it ran inside that has one.
    for (const [owner, file] of owners) {
      const sent = log.sent.filter((s) => [...s.owners].reverse().find((o) => owners.has(o)) === owner);
      if (sent.length === 0) throw new Error(`${owner} ran no statement: the scenario no longer reaches it`);
      rendered.set(`${file.file}.sql`, render(file, owner, sent));
    }
    if (UPDATE) {
      mkdirSync(DIR, { recursive: true });
      for (const name of sqlFiles()) if (!rendered.has(name)) rmSync(new URL(name, DIR));
      for (const [name, text] of rendered) writeFileSync(new URL(name, DIR), text);
    }
  });
  after(async () => {
    log.restore();
    // The jobs the call left (its dispatch, the carrier's reports) were done here already.
    const jobs = ringlane ? await ringlane.runtime.queues.calls.queue.getJobs(['waiting', 'delayed']) : [];
    for (const job of jobs) if (job.name === 'dispatch' || job.data.callIds?.includes(callId)) await job.remove();
    await ringlane?.close();
    await dataSource?.destroy();
    await pool?.end();
  });

  /** A call placed, dialed, answered and completed; its events relayed, claimed and their attempts recorded. */
  async function runScenario(): Promise<void> {
    const { engine } = ringlane.runtime;
    const res = await request(ringlane.app)
      .post('/v1/calls')
      .set('Authorization', bearer(org.key))
      .send({ agent_id: org.agentId, contact_id: org.contactIds[0], simulate: { duration_seconds: 30 } });
    callId = expectStatus(res, 201).body.id;
    await engine.dispatch(org.id);
    const at = (s: number) => new Date(Date.now() + s * 1000);
    await engine.applyReport([callId], { kind: 'ringing' }, at(1));
    await engine.applyReport([callId], { kind: 'answered' }, at(2));
    await engine.applyReport([callId], { kind: 'ended', status: 'completed', durationSeconds: 30 }, at(32));
    const [{ status }] = await db.query('SELECT status FROM calls WHERE id = $1', [callId]);
    expect(status).to.equal('completed');

    expect(await new Relay(dataSource, new OutboxRepository(dataSource)).batch()).to.be.at.least(4);

    const claims = new DeliveryClaimsRepository(pool);
    const open = await claims.openRange(retainedHistory('webhook_deliveries'));
    const found = await claims.openEndpoints('', 1000, open);
    expect(found.map((e) => e.id)).to.include.members([endpoints.plain, endpoints.paced]);
    const due = await claims.claimDue([{ endpointId: endpoints.plain, quota: 10 }], 60, open);
    const paced = await claims.claimPaced([{ endpointId: endpoints.paced, quota: 10 }], 60, open);
    expect([due.length, paced.length]).to.deep.equal([4, 4]);
    // The plain endpoint's succeed; the paced one answers 410 Gone: disabled, its other deliveries paused.
    const attempt = (t: DeliveryTarget, gone: boolean): RecordedAttempt => ({
      deliveryId: t.delivery_id,
      deliveryCreatedAt: t.created_at,
      endpointId: t.endpoint_id,
      attemptId: randomUUID(),
      attemptedAt: new Date(),
      responseStatus: gone ? 410 : 200,
      durationMs: 5,
      error: gone ? 'HTTP 410' : null,
      responseBody: null,
      status: gone ? 'failed' : 'succeeded',
      nextAttemptAt: null,
      endpointGone: gone,
    });
    const disabled = await new AttemptsRepository(pool).record([...due.map((t) => attempt(t, false)), ...paced.map((t) => attempt(t, true))], 24);
    expect(disabled).to.deep.equal([endpoints.paced]);
  }

  it('docs/sql holds a file for each hot statement, and no other', () => {
    expect(sqlFiles().sort(), 'docs/sql: run `npm run docs:sql`').to.deep.equal([...rendered.keys()].sort());
  });

  for (const { file } of FILES) {
    it(`docs/sql/${file}.sql is the SQL as it runs`, () => {
      const name = `${file}.sql`;
      const written = sqlFiles().includes(name) ? readFileSync(new URL(name, DIR), 'utf8') : '';
      expect(written, `docs/sql/${name} is not the SQL that runs: run \`npm run docs:sql\``).to.equal(rendered.get(name));
    });
  }
});
