import { expect } from 'chai';
import { asCaller, createOrg, expectError, expectStatus, keyWith, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid } from '../helpers/org-resource.js';
import { exitCodeOf, startProcess } from '../helpers/processes.js';
import { db } from '../helpers/db.js';
import { chargeForSeconds, formatMoney } from '../../src/lib/money.js';
import { CHUNK_HOURS, UsageRollup } from '../../src/usage/usage-rollup.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { floorHour, startOfNextUtcMonth, startOfUtcMonth } from '../../src/usage/usage-window.js';

const rollup = new UsageRollup(new UsageRepository(db));
const rollUp = (now: Date) => rollup.run(now);

const HOUR = 3_600_000;
const MINUTE = 60_000;
const PER_MINUTE = 600_001n; // an odd rate, so per-second charges have awkward micros
const PER_TEXT = 50_000n;
// The tenant's resale prices, as the engine records them on its calls and texts (odd too).
const RESALE_PER_MINUTE = 200_003n;
const RESALE_PER_TEXT = 20_001n;
const USAGE_FIELDS = ['tenant_id', 'since', 'until', 'completed_calls', 'talk_time_seconds', 'currency', 'charges', 'billable'];

let counter = 0;
const uniqueId = (prefix: string) => `${prefix}_usage${process.pid}x${counter++}`;

interface Account {
  reseller: TestOrg;
  as: Caller;
  tenantId: string;
  agentId: string;
}

/** A reseller (through the admin API) with one tenant (through POST /v1/tenants). */
async function resellerWithTenant(): Promise<Account> {
  const reseller = await createOrg({ reseller: true, balance: '100', rates: { per_minute: '0.600001', per_text: '0.050000' } });
  const as = asCaller(reseller.key);
  const tenant = expectStatus(await as.post('/v1/tenants', { name: 'Bright Smiles', timezone: 'UTC', industry: 'dental' }), 201).body;
  const [agent] = await db.query('SELECT id FROM agents WHERE org_id = $1 LIMIT 1', [tenant.id]);
  return { reseller, as, tenantId: tenant.id, agentId: agent.id };
}

/** What the test wrote, so each test can state what a window must add up to. */
interface Row {
  at: Date;
  kind: 'call' | 'text' | 'adjustment' | 'call-record';
  amountMicros: bigint;
  seconds: number;
  completed: boolean;
  /** What the tenant owes for the call record or the text (its message row). */
  billableMicros: bigint;
}

/**
 * Ledger lines paid by the reseller for the tenant's activity, written straight to the table.
 * A text's line comes with its message row, as the engine writes them (same time; billed at
 * RESALE_PER_TEXT when it is the tenant's).
 */
async function insertLedger(
  account: Account,
  lines: Array<{ at: Date; kind: 'call' | 'text' | 'adjustment'; amountMicros: bigint }>,
  subject = account.tenantId,
): Promise<Row[]> {
  const billable = subject === account.tenantId ? RESALE_PER_TEXT : null;
  for (const line of lines) {
    await db.query(
      `INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, reference, description, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'usage test', $7)`,
      [uniqueId('led'), account.reseller.id, subject, line.kind, line.amountMicros.toString(), uniqueId('ref'), line.at],
    );
    if (line.kind !== 'text') continue;
    await db.query(
      `INSERT INTO messages (id, org_id, payer_org_id, from_number, to_number, body, charge_micros, billable_micros, created_at, updated_at)
       VALUES ($1, $2, $3, '+14155550199', '+14155550100', 'usage test', $4, $5, $6, $6)`,
      [uniqueId('msg'), subject, account.reseller.id, (-line.amountMicros).toString(), billable?.toString() ?? null, line.at],
    );
  }
  return lines.map((l) => ({ ...l, seconds: 0, completed: false, billableMicros: l.kind === 'text' ? (billable ?? 0n) : 0n }));
}

/** Calls of the tenant (paid by the reseller), ended at `at`, written straight to the table. */
async function insertCalls(account: Account, calls: Array<{ at: Date; seconds: number; status?: string; billableMicros?: bigint }>): Promise<Row[]> {
  for (const call of calls) {
    await db.query(
      `INSERT INTO calls (id, org_id, payer_org_id, agent_id, direction, status, phone_number, simulate, last_sequence,
                          created_at, updated_at, dialed_at, started_at, ended_at, duration_seconds, billable_micros)
       VALUES ($1, $2, $3, $4, 'outbound', $5, '+14155550100', '{}'::jsonb, 4, $6, $7, $6, $6, $7, $8, $9)`,
      [
        uniqueId('call'),
        account.tenantId,
        account.reseller.id,
        account.agentId,
        call.status ?? 'completed',
        new Date(call.at.getTime() - call.seconds * 1000),
        call.at,
        call.seconds,
        call.billableMicros?.toString() ?? null,
      ],
    );
  }
  return calls.map((c) => ({
    at: c.at,
    kind: 'call-record' as const,
    amountMicros: 0n,
    seconds: c.seconds,
    completed: (c.status ?? 'completed') === 'completed',
    billableMicros: c.billableMicros ?? 0n,
  }));
}

/**
 * A call and its charge, as the engine writes them: billed at the resale price on the call, ended
 * at `at`, charged at the reseller's rate a moment after the end. Completed, unless `status` says
 * otherwise (a call canceled in progress is charged and billed too).
 */
async function insertChargedCall(account: Account, at: Date, seconds: number, status = 'completed'): Promise<Row[]> {
  return [
    ...(await insertCalls(account, [{ at, seconds, status, billableMicros: chargeForSeconds(seconds, RESALE_PER_MINUTE) }])),
    ...(await insertLedger(account, [{ at: new Date(at.getTime() + 3), kind: 'call', amountMicros: -chargeForSeconds(seconds, PER_MINUTE) }])),
  ];
}

const split = (calls: bigint, other: bigint) => ({ calls: formatMoney(calls), other: formatMoney(other), total: formatMoney(calls + other) });

/** The usage CONTRACT.md "Usage" describes, computed from what the test wrote. */
function expectedUsage(rows: Row[], since: Date, until: Date) {
  const inside = rows.filter((r) => r.at >= since && r.at < until);
  const calls = inside.filter((r) => r.kind === 'call').reduce((sum, r) => sum - r.amountMicros, 0n);
  const other = inside.filter((r) => r.kind === 'text').reduce((sum, r) => sum - r.amountMicros, 0n);
  const completed = inside.filter((r) => r.kind === 'call-record' && r.completed);
  const billable = (kind: Row['kind']) => inside.filter((r) => r.kind === kind).reduce((sum, r) => sum + r.billableMicros, 0n);
  return {
    completed_calls: completed.length,
    talk_time_seconds: completed.reduce((sum, r) => sum + r.seconds, 0),
    charges: split(calls, other),
    billable: split(billable('call-record'), billable('text')),
  };
}

/** What the ledger itself says the reseller was charged for the tenant in [since, until). */
async function ledgerCharges(account: Account, since: Date, until: Date) {
  const [row] = await db.query(
    `SELECT (-COALESCE(sum(amount_micros) FILTER (WHERE kind = 'call'), 0))::text AS calls,
            (-COALESCE(sum(amount_micros) FILTER (WHERE kind NOT IN ('call', 'adjustment')), 0))::text AS other,
            (-COALESCE(sum(amount_micros) FILTER (WHERE kind <> 'adjustment'), 0))::text AS total
       FROM ledger_entries WHERE org_id = $1 AND subject_org_id = $2 AND created_at >= $3 AND created_at < $4`,
    [account.reseller.id, account.tenantId, since, until],
  );
  return { calls: formatMoney(BigInt(row.calls)), other: formatMoney(BigInt(row.other)), total: formatMoney(BigInt(row.total)) };
}

/** What the tenant's own call and text rows say it owes for [since, until): calls by their end, texts by their recording. */
async function recordedBillable(account: Account, since: Date, until: Date) {
  const [row] = await db.query(
    `SELECT (SELECT COALESCE(sum(billable_micros), 0) FROM calls WHERE org_id = $1 AND ended_at >= $2 AND ended_at < $3)::text AS calls,
            (SELECT COALESCE(sum(billable_micros), 0) FROM messages WHERE org_id = $1 AND created_at >= $2 AND created_at < $3)::text AS other`,
    [account.tenantId, since, until],
  );
  return split(BigInt(row.calls), BigInt(row.other));
}

async function getUsage(account: Account, since?: Date, until?: Date) {
  const query = new URLSearchParams();
  if (since) query.set('since', since.toISOString());
  if (until) query.set('until', until.toISOString());
  const res = expectStatus(await account.as.get(`/v1/tenants/${account.tenantId}/usage${query.size ? `?${query}` : ''}`), 200);
  expect(res.body).to.have.all.keys(...USAGE_FIELDS);
  expect(res.body.charges).to.have.all.keys('calls', 'other', 'total');
  expect(res.body.billable).to.have.all.keys('calls', 'other', 'total');
  return res.body;
}

/** Asserts the usage of [since, until) equals what was written and what the ledger says. */
async function expectUsage(account: Account, rows: Row[], since: Date, until: Date) {
  const usage = await getUsage(account, since, until);
  expect(usage.tenant_id).to.equal(account.tenantId);
  expect(usage.since).to.equal(since.toISOString());
  expect(usage.until).to.equal(until.toISOString());
  expect(usage.currency).to.equal('USD');
  const { tenant_id, since: s, until: u, currency, ...figures } = usage;
  expect(figures).to.deep.equal(expectedUsage(rows, since, until));
  expect(usage.charges).to.deep.equal(await ledgerCharges(account, since, until));
  expect(usage.billable).to.deep.equal(await recordedBillable(account, since, until));
  return usage;
}

const watermark = async (): Promise<Date | null> => {
  const [row] = await db.query('SELECT rolled_until FROM usage_watermark WHERE id = 1');
  return row ? new Date(row.rolled_until) : null;
};

const bucketsOf = (orgId: string) =>
  db.query(
    `SELECT hour, completed_calls, talk_time_seconds::text, call_charges_micros::text, other_charges_micros::text, billable_calls_micros::text, billable_other_micros::text
       FROM usage_buckets WHERE org_id = $1 ORDER BY hour`,
    [orgId],
  );

describe('tenant usage (SPEC.md §2.2, §4.1, §8; CONTRACT.md "Usage")', () => {
  // The tests write rows at chosen past times, which a rollup run earlier would never revisit:
  // each test starts without a watermark (everything read raw until a rollup runs).
  beforeEach(async () => {
    await db.query('DELETE FROM usage_watermark');
  });

  it('equals the ledger to the micro for a mix of calls and texts, before and after the rollup', async () => {
    const account = await resellerWithTenant();
    const other = await resellerWithTenant();
    const until = startOfUtcMonth(new Date());
    const since = startOfUtcMonth(new Date(until.getTime() - 1));
    const rows: Row[] = [];
    for (let i = 0; i < 12; i++) {
      const at = new Date(since.getTime() + i * 53 * HOUR + i * 7 * MINUTE + 17);
      rows.push(...(await insertChargedCall(account, at, 1 + i * 37)));
      if (i % 3 === 0) rows.push(...(await insertLedger(account, [{ at: new Date(at.getTime() + 1000), kind: 'text', amountMicros: -PER_TEXT }])));
    }
    rows.push(
      // The edges: since is in, until is out.
      ...(await insertChargedCall(account, since, 61)),
      ...(await insertLedger(account, [{ at: new Date(since.getTime() - 1), kind: 'text', amountMicros: -PER_TEXT }])),
      ...(await insertLedger(account, [{ at: until, kind: 'text', amountMicros: -PER_TEXT }])),
      ...(await insertCalls(account, [{ at: until, seconds: 5 }])),
      // Not usage: a top-up, and calls that did not complete (billed nothing).
      ...(await insertLedger(account, [{ at: new Date(since.getTime() + 5 * HOUR), kind: 'adjustment', amountMicros: 25_000_000n }])),
      ...(await insertCalls(account, [{ at: new Date(since.getTime() + 6 * HOUR), seconds: 0, status: 'no_answer', billableMicros: 0n }])),
      ...(await insertCalls(account, [{ at: new Date(since.getTime() + 7 * HOUR), seconds: 0, status: 'busy', billableMicros: 0n }])),
      // Charged and billed, but not completed: hung up in progress when the tenant was disabled.
      ...(await insertChargedCall(account, new Date(since.getTime() + 8 * HOUR), 47, 'canceled')),
    );
    // Someone else's usage: the reseller's own, and another reseller's tenant.
    await insertLedger(account, [{ at: new Date(since.getTime() + HOUR), kind: 'call', amountMicros: -999n }], account.reseller.id);
    await insertChargedCall(other, new Date(since.getTime() + HOUR), 30);

    const before = await expectUsage(account, rows, since, until);
    expect(before.completed_calls).to.equal(13);
    expect(before.charges.other).to.equal(formatMoney(4n * PER_TEXT));
    expect(before.billable.other).to.equal(formatMoney(4n * RESALE_PER_TEXT));
    const seconds = [...Array.from({ length: 12 }, (_, i) => 1 + i * 37), 61, 47];
    expect(before.billable.calls).to.equal(formatMoney(seconds.reduce((sum, s) => sum + chargeForSeconds(s, RESALE_PER_MINUTE), 0n)));

    const result = await rollUp(new Date());
    expect(result.chunks).to.be.at.least(1);
    expect(await watermark()).to.deep.equal(floorHour(new Date(Date.now() - 15 * MINUTE)));
    expect(await expectUsage(account, rows, since, until)).to.deep.equal(before);
  });

  it('adds up a window crossing a month end, with partial hours at both edges', async () => {
    const account = await resellerWithTenant();
    const monthEnd = startOfUtcMonth(new Date());
    const since = new Date(monthEnd.getTime() - 90 * MINUTE); // 22:30 on the month's last day
    const until = new Date(monthEnd.getTime() + 75 * MINUTE); // 01:15 on the next month's first
    const rows: Row[] = [];
    const times = [
      since.getTime() - 1,
      since.getTime(),
      monthEnd.getTime() - HOUR - 1, // 22:59:59.999
      monthEnd.getTime() - HOUR, // 23:00
      monthEnd.getTime() - 1,
      monthEnd.getTime(),
      monthEnd.getTime() + 30 * MINUTE,
      until.getTime() - 1,
      until.getTime(),
    ];
    for (const [i, t] of times.entries()) {
      rows.push(...(await insertChargedCall(account, new Date(t - 3), 10 + i)));
      rows.push(...(await insertLedger(account, [{ at: new Date(t), kind: 'text', amountMicros: -(PER_TEXT + BigInt(i)) }])));
    }
    const raw = await expectUsage(account, rows, since, until);
    expect(raw.completed_calls).to.equal(7);

    await rollUp(new Date());
    const rolled = await expectUsage(account, rows, since, until);
    expect(rolled).to.deep.equal(raw);
    // The whole hours in between came from buckets; the partial edges from the ledger.
    const hours = (await bucketsOf(account.tenantId)).map((b: { hour: Date }) => b.hour.toISOString());
    expect(hours).to.include.members([new Date(monthEnd.getTime() - HOUR).toISOString(), monthEnd.toISOString()]);
  });

  it('is exact and current when part of the window is rolled up and part is not', async () => {
    const account = await resellerWithTenant();
    const now = new Date();
    const rows: Row[] = [];
    rows.push(...(await insertChargedCall(account, new Date(now.getTime() - 3 * 24 * HOUR - 7 * MINUTE), 95)));
    rows.push(...(await insertChargedCall(account, new Date(now.getTime() - 5 * HOUR), 42)));
    rows.push(...(await insertLedger(account, [{ at: new Date(now.getTime() - 5 * HOUR + 2000), kind: 'text', amountMicros: -PER_TEXT }])));

    await rollUp(now);
    const rolledUntil = await watermark();
    expect(rolledUntil).to.deep.equal(floorHour(new Date(now.getTime() - 15 * MINUTE)));

    // After the rollup: activity in the current hour, and in the not-yet-rolled lag before it.
    const fresh = new Date(Date.now() - 1000);
    rows.push(...(await insertChargedCall(account, fresh, 7)));
    rows.push(...(await insertLedger(account, [{ at: fresh, kind: 'text', amountMicros: -PER_TEXT }])));
    rows.push(...(await insertChargedCall(account, rolledUntil!, 11)));

    // since mid-hour inside the rolled part, until beyond now.
    const since = new Date(floorHour(new Date(now.getTime() - 4 * 24 * HOUR)).getTime() + 20 * MINUTE);
    const until = new Date(now.getTime() + HOUR);
    const usage = await expectUsage(account, rows, since, until);
    expect(usage.completed_calls).to.equal(4);

    // A row committed late into a rolled hour: counted from the next rollup on (it re-rolls the two hours before the watermark).
    const late = await insertChargedCall(account, new Date(rolledUntil!.getTime() - 30 * MINUTE), 13);
    expect((await getUsage(account, since, until)).completed_calls).to.equal(4);
    await rollUp(new Date());
    rows.push(...late);
    expect((await expectUsage(account, rows, since, until)).completed_calls).to.equal(5);
    // A window that lies wholly in the rolled part, and one wholly after the watermark.
    await expectUsage(account, rows, since, rolledUntil!);
    await expectUsage(account, rows, rolledUntil!, until);
  });

  it('covers the current UTC calendar month by default', async () => {
    const account = await resellerWithTenant();
    const now = new Date();
    const monthStart = startOfUtcMonth(now);
    const rows: Row[] = [];
    rows.push(...(await insertChargedCall(account, monthStart, 20)));
    rows.push(...(await insertChargedCall(account, new Date(now.getTime() - 2000), 21)));
    rows.push(...(await insertChargedCall(account, new Date(monthStart.getTime() - 1), 22)));
    rows.push(...(await insertLedger(account, [{ at: new Date(monthStart.getTime() - 1), kind: 'text', amountMicros: -PER_TEXT }])));
    await rollUp(now);

    const usage = await getUsage(account);
    expect(usage.since).to.equal(monthStart.toISOString());
    expect(usage.until).to.equal(startOfNextUtcMonth(now).toISOString());
    const { tenant_id, since, until, currency, ...figures } = usage;
    expect(figures).to.deep.equal(expectedUsage(rows, monthStart, startOfNextUtcMonth(now)));
    expect(figures.completed_calls).to.equal(2);
  });

  it('answers 400 invalid_window for a bad timestamp, an empty window or one over 366 days; 366 days is fine', async () => {
    const account = await resellerWithTenant();
    const path = `/v1/tenants/${account.tenantId}/usage`;
    const bad = [
      'since=2026-11-01',
      'since=2026-11-01T00:00:00',
      `since=${encodeURIComponent('2026-11-01T00:00:00+00:00')}`,
      `until=${encodeURIComponent('2026-11-01T01:00:00+01:00')}`,
      'since=2026-11-01T00:00:00Z&until=yesterday',
      'since=garbage',
      'since=',
      'since=2026-02-30T00:00:00Z',
      'since=2026-11-01T00:00:00Z&since=2026-11-02T00:00:00Z',
      'since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z',
      'since=2026-11-01T00:00:00Z&until=2026-11-01T00:00:00Z',
      'since=2025-11-01T00:00:00Z&until=2026-11-02T00:00:00.001Z',
      'since=2020-01-01T00:00:00Z&until=2026-01-01T00:00:00Z',
      `since=${new Date(Date.now() + HOUR).toISOString()}`,
    ];
    for (const query of bad) {
      const res = await account.as.get(`${path}?${query}`);
      expect(res.status, query).to.equal(400);
      expectError(res, 400, 'invalid_window');
    }
    const full = await getUsage(account, new Date('2025-11-01T00:00:00Z'), new Date('2026-11-02T00:00:00Z'));
    expect(full.since).to.equal('2025-11-01T00:00:00.000Z');
    expect(full.until).to.equal('2026-11-02T00:00:00.000Z');
    expect(expectStatus(await account.as.get(`${path}?since=2026-11-01T00:00:00.5Z&until=2026-11-01T00:00:01.123456Z`), 200).body).to.include({
      since: '2026-11-01T00:00:00.500Z',
      until: '2026-11-01T00:00:01.124Z',
    });
    expectInvalid(await account.as.get(`${path}?from=2026-11-01T00:00:00Z`), 'from');
  });

  it('reads a whole 366-day window from buckets plus the raw tail, equal to the ledger', async () => {
    const account = await resellerWithTenant();
    const now = new Date();
    const since = new Date(floorHour(now).getTime() - 366 * 24 * HOUR);
    const until = floorHour(now);
    const rows: Row[] = [];
    for (let day = 0; day < 366; day += 9) {
      rows.push(...(await insertChargedCall(account, new Date(since.getTime() + day * 24 * HOUR + (day % 24) * HOUR + 1234), 1 + day)));
    }
    rows.push(...(await insertLedger(account, [{ at: new Date(until.getTime() - 1), kind: 'text', amountMicros: -PER_TEXT }])));
    const raw = await expectUsage(account, rows, since, until);
    const result = await rollUp(now);
    expect(result.chunks).to.be.at.least(Math.floor((366 * 24) / CHUNK_HOURS));
    expect(await expectUsage(account, rows, since, until)).to.deep.equal(raw);
  });

  it('rolls up idempotently: a second run leaves the same buckets', async () => {
    const account = await resellerWithTenant();
    const base = floorHour(new Date(Date.now() - 2 * 24 * HOUR));
    await insertChargedCall(account, new Date(base.getTime() + 5 * MINUTE), 60);
    await insertChargedCall(account, new Date(base.getTime() + 50 * MINUTE), 61);
    await insertCalls(account, [{ at: new Date(base.getTime() + 55 * MINUTE), seconds: 0, status: 'no_answer' }]);
    await insertLedger(account, [
      { at: new Date(base.getTime() + 51 * MINUTE), kind: 'text', amountMicros: -PER_TEXT },
      { at: new Date(base.getTime() + 3 * HOUR), kind: 'text', amountMicros: -PER_TEXT },
      { at: new Date(base.getTime() + 4 * HOUR), kind: 'adjustment', amountMicros: 1_000_000n },
    ]);

    await rollUp(new Date());
    const first = await bucketsOf(account.tenantId);
    expect(first).to.deep.equal([
      {
        hour: base,
        completed_calls: 2,
        talk_time_seconds: '121',
        call_charges_micros: (chargeForSeconds(60, PER_MINUTE) + chargeForSeconds(61, PER_MINUTE)).toString(),
        other_charges_micros: PER_TEXT.toString(),
        billable_calls_micros: (chargeForSeconds(60, RESALE_PER_MINUTE) + chargeForSeconds(61, RESALE_PER_MINUTE)).toString(),
        billable_other_micros: RESALE_PER_TEXT.toString(),
      },
      {
        hour: new Date(base.getTime() + 3 * HOUR),
        completed_calls: 0,
        talk_time_seconds: '0',
        call_charges_micros: '0',
        other_charges_micros: PER_TEXT.toString(),
        billable_calls_micros: '0',
        billable_other_micros: RESALE_PER_TEXT.toString(),
      },
    ]);
    const mark = await watermark();
    await rollUp(new Date());
    expect(await bucketsOf(account.tenantId)).to.deep.equal(first);
    expect(await watermark()).to.deep.equal(mark);
    // Even recomputing everything from scratch gives the same buckets.
    await db.query('DELETE FROM usage_watermark');
    await rollUp(new Date());
    expect(await bucketsOf(account.tenantId)).to.deep.equal(first);
  });

  it('stays readable while the tenant is disabled', async () => {
    const account = await resellerWithTenant();
    await insertChargedCall(account, new Date(Date.now() - MINUTE), 30);
    expectStatus(await account.as.patch(`/v1/tenants/${account.tenantId}`, { disabled: true }), 200);
    expect((await getUsage(account)).completed_calls).to.equal(1);
  });

  it('the usage worker process rolls up on start, then exits 0 on SIGTERM', async function () {
    this.timeout(30_000);
    const account = await resellerWithTenant();
    const at = floorHour(new Date(Date.now() - 3 * HOUR));
    await insertChargedCall(account, new Date(at.getTime() + MINUTE), 42);
    const worker = startProcess('workers/usage.ts', { LOG_LEVEL: 'info' });
    try {
      const deadline = Date.now() + 20_000;
      const target = floorHour(new Date(Date.now() - 15 * MINUTE)).getTime();
      // The watermark advances chunk by chunk: wait for the last one.
      while (((await watermark())?.getTime() ?? 0) < target) {
        if (worker.exitCode !== null) throw new Error(`usage worker exited with ${worker.exitCode}`);
        if (Date.now() > deadline) throw new Error('the usage worker did not roll up');
        await new Promise((r) => setTimeout(r, 100));
      }
      const [bucket] = await bucketsOf(account.tenantId);
      expect(bucket).to.include({ completed_calls: 1, talk_time_seconds: '42' });
      expect(bucket.hour).to.deep.equal(at);
      worker.kill('SIGTERM');
      expect(await exitCodeOf(worker)).to.equal(0);
    } finally {
      worker.kill('SIGKILL');
    }
  });

  describe('who may read it', () => {
    it("answers 404 tenant_not_found for another reseller's tenant or an unknown id", async () => {
      const mine = await resellerWithTenant();
      const theirs = await resellerWithTenant();
      expectError(await mine.as.get(`/v1/tenants/${theirs.tenantId}/usage`), 404, 'tenant_not_found');
      expectError(await mine.as.get(`/v1/tenants/${mine.reseller.id}/usage`), 404, 'tenant_not_found');
      expectError(await mine.as.get('/v1/tenants/ten_doesnotexist/usage'), 404, 'tenant_not_found');
    });

    it('answers 403 not_a_reseller on an ordinary organization', async () => {
      const ordinary = await createOrg();
      expectError(await asCaller(ordinary.key).get('/v1/tenants/ten_whatever/usage'), 403, 'not_a_reseller');
    });

    it('answers 403 not_available_for_tenant inside a tenant (X-Tenant-Id)', async () => {
      const account = await resellerWithTenant();
      const inside = asCaller(account.reseller.key, { 'X-Tenant-Id': account.tenantId });
      expectError(await inside.get(`/v1/tenants/${account.tenantId}/usage`), 403, 'not_available_for_tenant');
    });

    it('needs no capability: a read-only key reads it', async () => {
      const account = await resellerWithTenant();
      const reader = asCaller(await keyWith(account.reseller, []));
      expectStatus(await reader.get(`/v1/tenants/${account.tenantId}/usage`), 200);
    });
  });
});
