// The Procfile scaled out: two `web` processes and two of every worker kind on one database and
// one Redis, as a platform runs them with every line at 2 dynos. Calls, a campaign, a tenant
// disabled mid-run and webhook deliveries all go through the API of both web processes; what
// must hold is what a customer and their accountant would check afterwards.
import { expect } from 'chai';
import { db } from '../helpers/db.js';
import { asCaller, expectStatus, type Caller } from '../helpers/api.js';
import { freePort, SERVICES, ServiceProcesses, waitUntil, type ServiceKind } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server.js';
import { SCHEDULERS, schedulersIn } from '../helpers/schedulers.js';
import { createTenant, reseller } from '../helpers/tenants.js';
import { expectChargedOnce, maxOverlap, uniquePhone, voiceOrg } from '../helpers/voice.js';

const DYNOS = 2;

/** An organization's (or tenant's) caller on each web process, round robin. */
function acrossWeb(ports: number[], key: string, headers: Record<string, string> = {}): () => Caller {
  let next = 0;
  return () => asCaller(key, headers, `http://127.0.0.1:${ports[next++ % ports.length]}`);
}

/** Its agent, `contacts` contacts and a webhook endpoint to `receiver`, made through the API. */
async function equip(caller: Caller, receiver: Receiver, contacts: number): Promise<{ agentId: string; contactIds: string[]; endpointId: string }> {
  const agentId = expectStatus(await caller.post('/v1/agents', { name: 'Ava' }), 201).body.id;
  const contactIds: string[] = [];
  for (let i = 0; i < contacts; i++)
    contactIds.push(expectStatus(await caller.post('/v1/contacts', { name: `C${i}`, phone_number: uniquePhone() }), 201).body.id);
  const endpointId = expectStatus(await caller.post('/v1/webhook-endpoints', { name: 'All', url: receiver.url, secret: 'a-secret-value', outcomes: [] }), 201)
    .body.id;
  return { agentId, contactIds, endpointId };
}

describe(`the Procfile at ${DYNOS} processes of every kind`, function () {
  this.timeout(180_000);
  const services = new ServiceProcesses();
  let redis: PrivateRedis;
  let receiver: Receiver;

  after(async function () {
    this.timeout(60_000);
    await services.stopAll();
    await receiver?.close();
    await redis?.stop();
  });

  it('calls, a campaign, a tenant disabled mid-run and deliveries: limits held, each call charged once, usage equals the ledger, one delivery per (event, endpoint), schedules once', async () => {
    receiver = await startReceiver();
    // A Redis of its own, so the schedulers counted are this fleet's alone.
    redis = await startPrivateRedis();
    const ports = await Promise.all(Array.from({ length: DYNOS }, () => freePort()));
    const kinds = Object.keys(SERVICES) as ServiceKind[];
    // One process of every kind at a time: fourteen starting at once on two cores take longer than a start may.
    for (const port of ports) await Promise.all(kinds.map((kind) => services.start(kind, { ...redis.env, ...(kind === 'web' ? { PORT: String(port) } : {}) })));

    // A direct customer: at most 3 calls at once, 24 calls and a campaign of 8 contacts.
    const direct = await voiceOrg({ fields: { ceiling: { max_concurrent_calls: 3, max_calls_per_hour: 1000 } } });
    const directApi = acrossWeb(ports, direct.key);
    const own = await equip(directApi(), receiver, 8);
    // A reseller with two tenants, each at most 2 at once, 12 calls each; the first is disabled mid-run.
    const owner = await reseller({ ceiling: { max_concurrent_calls: 2, max_calls_per_hour: 1000 } });
    const tenants = [await createTenant(owner), await createTenant(owner)];
    const inside = tenants.map((t) => acrossWeb(ports, owner.key, { 'X-Tenant-Id': t.id }));
    const tenantGear = [await equip(inside[0](), receiver, 1), await equip(inside[1](), receiver, 1)];

    // 500 simulated seconds last 1 s here (SIM_SECOND_MS=2): calls overlap and wait for a slot.
    const place = async (api: () => Caller, agentId: string, contactId: string) =>
      expectStatus(await api().post('/v1/calls', { agent_id: agentId, contact_id: contactId, simulate: { duration_seconds: 150 } }), 201).body.id as string;
    const campaignId = expectStatus(await directApi().post('/v1/campaigns', { name: 'Scaled', agent_id: own.agentId, contact_ids: own.contactIds }), 201).body
      .id;
    expectStatus(await directApi().patch(`/v1/campaigns/${campaignId}`, { state: 'running' }), 200);
    const placed = await Promise.all([
      Promise.all(Array.from({ length: 24 }, (_, i) => place(directApi, own.agentId, own.contactIds[i % 8]))),
      ...tenantGear.map((gear, t) => Promise.all(Array.from({ length: 12 }, () => place(inside[t], gear.agentId, gear.contactIds[0])))),
    ]);
    await waitUntil(
      'the first tenant has a call in progress',
      async () => (await db.query(`SELECT 1 FROM calls WHERE org_id = $1 AND status = 'in_progress'`, [tenants[0].id])).length > 0,
      20_000,
      () => services.tails(),
    );
    expectStatus(await owner.as.patch(`/v1/tenants/${tenants[0].id}`, { disabled: true }), 200);

    const orgIds = [direct.id, ...tenants.map((t) => t.id)];
    const open = async () => (await db.query(`SELECT count(*)::int AS n FROM calls WHERE org_id = ANY($1) AND ended_at IS NULL`, [orgIds]))[0].n;
    await waitUntil(
      'every call ended',
      async () => (await open()) === 0,
      60_000,
      async () => `${await open()} open\n${services.tails()}`,
      250,
    );
    const calls: Array<{
      id: string;
      org_id: string;
      status: string;
      end_reason: string;
      campaign_id: string | null;
      contact_id: string;
      dialed_at: Date | null;
      ended_at: Date;
      charge: string;
    }> = await db.query(
      `SELECT id, org_id, status, end_reason, campaign_id, contact_id, dialed_at, ended_at, COALESCE(charge_micros, 0)::text AS charge FROM calls WHERE org_id = ANY($1)`,
      [orgIds],
    );
    const callsOf = (orgId: string) => calls.filter((c) => c.org_id === orgId);

    // Every call placed is there, and the campaign called each of its contacts exactly once.
    expect(
      calls
        .filter((c) => c.campaign_id === null)
        .map((c) => c.id)
        .sort(),
    ).to.deep.equal(placed.flat().sort());
    const campaignCalls = calls.filter((c) => c.campaign_id === campaignId);
    expect(campaignCalls.map((c) => c.contact_id).sort()).to.deep.equal([...own.contactIds].sort());

    // Limits: never more calls dialed and not yet ended than the organization may have at once.
    const dialedSpans = (orgId: string) =>
      callsOf(orgId)
        .filter((c) => c.dialed_at)
        .map((c) => [c.dialed_at!.getTime(), c.ended_at.getTime()] as [number, number]);
    // (Reached, not only respected: the load was enough to fill every slot.)
    expect(maxOverlap(dialedSpans(direct.id)), 'direct customer').to.equal(3);
    expect(maxOverlap(dialedSpans(tenants[1].id)), 'second tenant').to.equal(2);
    expect(maxOverlap(dialedSpans(tenants[0].id)), 'first tenant, disabled mid-run').to.be.within(1, 2);

    // The disabled tenant dialed nothing after it was disabled; the other tenant completed everything.
    const [{ disabled_at: disabledAt }] = await db.query('SELECT disabled_at FROM organizations WHERE id = $1', [tenants[0].id]);
    const first = callsOf(tenants[0].id);
    expect(first.filter((c) => c.dialed_at && c.dialed_at > disabledAt)).to.deep.equal([]);
    expect(first.filter((c) => c.end_reason === 'tenant_disabled').length, 'calls ended by the disable').to.be.above(0);
    expect(callsOf(tenants[1].id).map((c) => c.status)).to.deep.equal(Array(12).fill('completed'));
    expect(callsOf(direct.id).map((c) => c.status)).to.deep.equal(Array(32).fill('completed'));

    // Each call charged exactly once, by exactly its recorded charge (none for a call never answered).
    await expectChargedOnce((sql, values) => db.query(sql, values), calls);

    // Usage of each tenant equals what the ledger charged the reseller for it.
    for (const tenant of tenants) {
      const usage = expectStatus(await owner.as.get(`/v1/tenants/${tenant.id}/usage`), 200).body;
      const [ledgerTotal] = await db.query(
        `SELECT (-COALESCE(sum(amount_micros), 0))::text AS micros FROM ledger_entries WHERE subject_org_id = $1 AND kind <> 'adjustment'`,
        [tenant.id],
      );
      expect(Math.round(Number(usage.charges.total) * 1e6), tenant.id).to.equal(Number(ledgerTotal.micros));
      const completed = callsOf(tenant.id).filter((c) => c.status === 'completed');
      expect(usage.completed_calls, tenant.id).to.equal(completed.length);
    }

    // One delivery record per (event, endpoint), and every event reached its endpoint.
    const [events] = await db.query(`SELECT count(*)::int AS n FROM call_events WHERE org_id = ANY($1)`, [orgIds]);
    const deliveries = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS records, count(DISTINCT (event_id, endpoint_id))::int AS pairs, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded
           FROM webhook_deliveries WHERE org_id = ANY($1)`,
          [orgIds],
        )
      )[0];
    await waitUntil('every event delivered', async () => (await deliveries()).succeeded === events.n, 30_000, deliveries);
    expect(await deliveries()).to.deep.equal({ records: events.n, pairs: events.n, succeeded: events.n });
    const receivedEvents = new Set(receiver.received.map((r) => `${r.body.call_id}:${r.body.sequence}`));
    expect(receivedEvents.size).to.equal(events.n);

    // Two of each worker kind: each queue still has each of its schedulers exactly once.
    expect(await schedulersIn(redis.target)).to.deep.equal(SCHEDULERS);
  });
});
