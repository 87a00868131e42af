import { expect } from 'chai';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { config } from '../../src/config.js';
import { createRuntime, openDatabase, type Runtime } from '../../src/runtime.js';
import { asCaller, expectStatus, type Caller, type TestOrg } from '../helpers/api.js';
import { db } from '../helpers/db.js';
import { redisForTests } from '../helpers/redis.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { balanceOf, eventsOf, uniquePhone, voiceOrg } from '../helpers/voice.js';

// Each test forces, with a third connection holding one row, the interleaving in which two of the
// engine's statements or transactions that take the same rows in different orders deadlock: one
// takes the first row and waits for the second, which the other took first and which now waits
// for the first. With one lock order (calls by id, then organizations by id) the later one waits
// for the first row holding nothing, and both go through.

const ANSWERED_FOR_3_SECONDS = { kind: 'ended', status: 'completed', durationSeconds: 3 } as const;

/** An agent and a contact of the organization `caller` acts in. */
async function agentAndContact(caller: Caller): Promise<{ agentId: string; contactId: string }> {
  const [agent] = expectStatus(await caller.get('/v1/agents'), 200).body.data;
  const agentId: string = agent?.id ?? expectStatus(await caller.post('/v1/agents', { name: 'Ava' }), 201).body.id;
  const contact = expectStatus(await caller.post('/v1/contacts', { name: 'Cleo', phone_number: uniquePhone() }), 201).body;
  return { agentId, contactId: contact.id };
}

/** POST /v1/calls as `caller` (3 s of talk when answered); the call's id. No calls worker runs: it stays queued. */
async function place(caller: Caller, { agentId, contactId }: { agentId: string; contactId: string }): Promise<string> {
  return expectStatus(await caller.post('/v1/calls', { agent_id: agentId, contact_id: contactId, simulate: { duration_seconds: 3 } }), 201).body.id;
}

/** Each id's place in the database's `ORDER BY id`, the order the engine locks calls in. */
async function ranks(ids: string[]): Promise<(id: string) => number> {
  const rows = await db.query<Array<{ id: string }>>('SELECT id FROM unnest($1::varchar[]) AS t(id) ORDER BY id', [ids]);
  const rank = new Map(rows.map((r, i) => [r.id, i]));
  return (id) => rank.get(id)!;
}

/** Whether another session could lock the organization's row now. */
async function lockable(orgId: string): Promise<boolean> {
  try {
    await db.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [orgId]);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return false; // lock_not_available
    throw error;
  }
}

/** Two calls of one organization, `[low, high]` by id, `high` placed first (so also first in the table). */
async function twoCallsPlacedHighFirst(org: TestOrg): Promise<[string, string]> {
  const caller = asCaller(org.key);
  const target = await agentAndContact(caller);
  const high = await place(caller, target);
  for (;;) {
    const next = await place(caller, target);
    const rank = await ranks([high, next]);
    if (rank(next) < rank(high)) return [next, high];
  }
}

async function expectCompleted(ids: string[]): Promise<void> {
  const rows = await db.query<Array<{ status: string }>>('SELECT status FROM calls WHERE id = ANY($1)', [ids]);
  expect(rows.map((r) => r.status)).to.deep.equal(ids.map(() => 'completed'));
  for (const id of ids) {
    expect((await eventsOf(id)).map((e) => e.event)).to.deep.equal(['call.queued', 'call.ringing', 'call.in_progress', 'call.completed']);
  }
}

describe('one lock order for calls, organizations and the ledger (docs/architecture.md "The call engine")', function () {
  this.timeout(30_000);
  let runtime: Runtime;
  let holder: pg.Client;

  before(async () => {
    runtime = createRuntime({ db, redis: redisForTests() });
    holder = new pg.Client({ connectionString: config.databaseUrl });
    await holder.connect();
  });
  after(async () => {
    await holder.end();
    await runtime.close();
  });
  afterEach(async () => {
    await holder.query('ROLLBACK');
  });

  /**
   * Until `count` sessions running a statement like `pattern` wait for a lock (a row's, or the
   * transaction's that holds it), or `unless` has settled (it did not have to wait).
   */
  async function waitingFor(pattern: string, count = 1, unless?: Promise<unknown>): Promise<void> {
    let settled = false;
    void unless?.then(
      () => (settled = true),
      () => (settled = true),
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const [{ n }] = await db.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
        [pattern],
      );
      if (n >= count || settled) return;
      if (Date.now() > deadline) {
        const sessions = await db.query(
          'SELECT wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity WHERE datname = current_database()',
        );
        throw new Error(`no ${count} session(s) waiting in ${pattern}; the sessions: ${JSON.stringify(sessions)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Both settled; a deadlock (or anything else) in either fails the test with its message. */
  async function bothSucceed(...work: Array<Promise<unknown>>): Promise<void> {
    const failures = (await Promise.allSettled(work)).flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    expect(failures).to.deep.equal([]);
  }

  it('a batch’s ringing report (one UPDATE of several calls) and its end (the calls locked by id), run at once', async () => {
    const org = await voiceOrg();
    const [low, high] = await twoCallsPlacedHighFirst(org);

    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM calls WHERE id = $1 FOR UPDATE', [low]);
    // The end locks by id: it waits for `low`, before taking `high`.
    const ending = runtime.engine.applyReport([low, high], ANSWERED_FOR_3_SECONDS, new Date());
    await waitingFor('SELECT id, status, started_at%FOR UPDATE');
    // The ringing report, its calls listed as the carrier's batch came (`high` first).
    const ringing = runtime.engine.applyReport([high, low], { kind: 'ringing' }, new Date());
    await waitingFor('%call.ringing%');
    await holder.query('COMMIT');

    await bothSucceed(ending, ringing);
    await expectCompleted([low, high]);
    // Each charged once: 3 s at 0.12 a minute.
    expect(await balanceOf(org)).to.equal('99.988000');
  });

  describe('a batch dialed again (the sweeper’s, up to 5,000 calls) as it ends', () => {
    // A plan for a large batch reads the calls in table order (a bitmap or sequential scan), not by id.
    let tableOrder: DataSource;
    let sweeping: Runtime;
    before(async () => {
      // A session setting sent at connection start: on a session connection (DATABASE_DIRECT_URL
      // in the PgBouncer pass, which refuses the startup parameter `options`, and whose server
      // connections each transaction may land on would not have it).
      const url = new URL(config.databaseDirectUrl);
      url.searchParams.set('options', '-c enable_indexscan=off');
      tableOrder = await openDatabase(url.toString()).initialize();
      sweeping = createRuntime({ db: tableOrder, redis: redisForTests() });
    });
    after(async () => {
      await sweeping.close();
      await tableOrder.destroy();
    });

    it('the dial (one UPDATE of several calls) and the end (the calls locked by id), run at once', async () => {
      const org = await voiceOrg();
      const [low, high] = await twoCallsPlacedHighFirst(org);

      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM calls WHERE id = $1 FOR UPDATE', [low]);
      const ending = runtime.engine.applyReport([low, high], ANSWERED_FOR_3_SECONDS, new Date());
      await waitingFor('SELECT id, status, started_at%FOR UPDATE');
      const dialing = sweeping.engine.dial([high, low]);
      await waitingFor('%dialed_at = COALESCE%');
      await holder.query('COMMIT');

      await bothSucceed(ending, dialing);
      await expectCompleted([low, high]);
      expect(await balanceOf(org)).to.equal('99.988000');
    });
  });

  it('a tenant’s dial within its spend limit (calls, then the tenant’s row) and an ending charging it (calls, then the tenant’s row), run at once', async () => {
    const owner = await reseller();
    const tenant = await createTenant(owner);
    const inside = owner.inside(tenant.id);
    expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { monthly_spend_limit: '50.00' }), 200);
    const target = await agentAndContact(inside);
    const answered = await place(inside, target);
    const queued = await place(inside, target);
    await runtime.engine.applyReport([answered], { kind: 'ringing' }, new Date());
    await runtime.engine.applyReport([answered], { kind: 'answered' }, new Date());

    await holder.query('BEGIN');
    // The tenant's row held, as a PATCH of its limits holds it: the ending locks its call, then waits for the row.
    await holder.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [tenant.id]);
    const ending = runtime.engine.applyReport([answered], ANSWERED_FOR_3_SECONDS, new Date());
    await waitingFor('SELECT id, monthly_spend_limit_micros%FOR NO KEY UPDATE');
    // The dial of both calls: it waits for the ending's call, before taking the tenant's row.
    const dialing = runtime.engine.dial([answered, queued], new Map(), tenant.id);
    await waitingFor('SELECT id, org_id FROM calls%FOR NO KEY UPDATE');
    await holder.query('COMMIT');

    await bothSucceed(ending, dialing);
    await expectCompleted([answered]);
    const [dialed] = await db.query<Array<{ status: string; dialed_at: Date | null }>>('SELECT status, dialed_at FROM calls WHERE id = $1', [queued]);
    expect(dialed.status).to.equal('queued');
    expect(dialed.dialed_at).to.be.an.instanceOf(Date);
    // 3 s at the reseller's 0.60 a minute.
    expect(expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/limits`), 200).body.spent_this_month).to.equal('0.030000');
  });

  for (const spendLimit of [null, '50.00']) {
    it(`a dial of a tenant's calls${spendLimit ? ' (within a spend limit)' : ''} while the tenant is being disabled: it waits for the disable and dials nothing`, async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      if (spendLimit) expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}/limits`, { monthly_spend_limit: spendLimit }), 200);
      const target = await agentAndContact(inside);
      const calls = [await place(inside, target), await place(inside, target)];

      // A disable in flight (its row written, not yet committed), as a dispatch that read the tenant
      // enabled a moment before goes on to dial its calls.
      await holder.query('BEGIN');
      await holder.query('UPDATE organizations SET disabled = true, disabled_at = now() WHERE id = $1', [tenant.id]);
      const dialing = runtime.engine.dial(calls, new Map(), spendLimit ? tenant.id : null);
      await waitingFor('%FROM organizations%FOR SHARE%', 1, dialing);
      await holder.query('COMMIT');
      await dialing;

      const rows = await db.query<Array<{ status: string; dialed_at: Date | null }>>('SELECT status, dialed_at FROM calls WHERE id = ANY($1)', [calls]);
      // Left for the tenant's apply-state job, which ends them tenant_disabled (not a spend limit's refusal).
      expect(rows).to.deep.equal([
        { status: 'queued', dialed_at: null },
        { status: 'queued', dialed_at: null },
      ]);
    });
  }

  it('two batches charging the same two payers (the ledger’s balance trigger locks them by id), each one’s calls in the other order by id', async () => {
    const plain = await voiceOrg();
    const owner = await reseller();
    const tenant = await createTenant(owner);
    const callers = { plain: asCaller(plain.key), owner: owner.as, tenant: owner.inside(tenant.id) };
    const targets = {
      plain: await agentAndContact(callers.plain),
      owner: await agentAndContact(callers.owner),
      tenant: await agentAndContact(callers.tenant),
    };
    // Calls of each until there are two batches, by id: `plain`'s then the tenant's (charged to
    // `owner`), and `owner`'s then `plain`'s. So each charges the two payers in the other order.
    const calls = { plain: [] as string[], owner: [] as string[], tenant: [] as string[] };
    let batches: { forwards: [string, string]; backwards: [string, string] } | null = null;
    while (!batches) {
      for (const who of ['plain', 'owner', 'tenant'] as const) calls[who].push(await place(callers[who], targets[who]));
      const rank = await ranks([...calls.plain, ...calls.owner, ...calls.tenant]);
      const ordered = (lows: string[], highs: string[]) =>
        lows.flatMap((low) => highs.filter((high) => rank(low) < rank(high)).map((high): [string, string] => [low, high]));
      for (const forwards of ordered(calls.plain, calls.tenant)) {
        const backwards = ordered(calls.owner, calls.plain).find(([, plainCall]) => plainCall !== forwards[0]);
        if (backwards) {
          batches = { forwards, backwards };
          break;
        }
      }
    }

    // Rung and answered already: ending them changes each call once (a second change in one
    // transaction would check its organization's foreign key before the ledger does).
    const all = [...batches.forwards, ...batches.backwards];
    await runtime.engine.applyReport(all, { kind: 'ringing' }, new Date());
    await runtime.engine.applyReport(all, { kind: 'answered' }, new Date());

    // The payer later by id held, as a top-up holds it: the forwards batch's balance trigger takes
    // the earlier payer's row, then waits for the later's; the backwards batch waits for the earlier.
    const payerRank = await ranks([plain.id, owner.id]);
    const [earlier, later] = [plain.id, owner.id].sort((x, y) => payerRank(x) - payerRank(y));
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [later]);
    const forwards = runtime.engine.applyReport(batches.forwards, ANSWERED_FOR_3_SECONDS, new Date());
    await waitingFor('INSERT INTO ledger_entries%');
    expect(await lockable(earlier), 'the earlier payer, locked before the later').to.equal(false);
    const backwards = runtime.engine.applyReport(batches.backwards, ANSWERED_FOR_3_SECONDS, new Date());
    await waitingFor('INSERT INTO ledger_entries%', 2, backwards);
    await holder.query('COMMIT');

    await bothSucceed(forwards, backwards);
    await expectCompleted(all);
    // 3 s each: two calls at `plain`'s 0.12 a minute, two charged to `owner` at its 0.60.
    expect(await balanceOf(plain)).to.equal('99.988000');
    expect(await balanceOf(owner)).to.equal('99.940000');
  });
});
