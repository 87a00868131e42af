import { expect } from 'chai';
import request from 'supertest';
import { db } from '../helpers/db.js';
import type { RouteDoc } from '../../src/http/route-doc.js';
import { idParamsResource } from '../../src/http/schemas.js';
import { createRelay } from '../../src/runtime.js';
import { app, asCaller, createOrg, sharedApp, uniqueEmail, walkList, type Caller } from '../helpers/api.js';
import { CLOSED_AREA_REQUESTS, createTenant, reseller } from '../helpers/tenants.js';
import { uniquePhone } from '../helpers/voice.js';

/*
 * The isolation matrix (SPEC.md §1, §4.1, §5, §7; CONTRACT.md §2): two resellers with two
 * tenants each and one ordinary organization. Every context holds one resource of every
 * family; every other context must find each of them exactly as unknown as an id that never
 * existed, and every list shows only the context's own. Cases come from the tables below.
 */

type Response = request.Response;
type AccountName = 'R1' | 'R2' | 'O';

interface ContextSpec {
  /** `R1`, `R1a`, ..., `O`. */
  name: string;
  /** How failures name the context: `R1 (own)`, `R1 inside R1a`. */
  label: string;
  /** The account whose key acts (with X-Tenant-Id inside a tenant). */
  account: AccountName;
  tenant: boolean;
}

const context = (name: string, account: AccountName, tenant: boolean): ContextSpec => ({
  name,
  account,
  tenant,
  label: tenant ? `${account} inside ${name}` : `${name} (own)`,
});

const CONTEXTS: ContextSpec[] = [
  context('R1', 'R1', false),
  context('R1a', 'R1', true),
  context('R1b', 'R1', true),
  context('R2', 'R2', false),
  context('R2a', 'R2', true),
  context('R2b', 'R2', true),
  context('O', 'O', false),
];
const ACCOUNT_CONTEXTS = CONTEXTS.filter((c) => !c.tenant);
const TENANT_CONTEXTS = CONTEXTS.filter((c) => c.tenant);
const RESELLER_CONTEXTS = ACCOUNT_CONTEXTS.filter((c) => c.name !== 'O');
const RESELLER_NAMES = RESELLER_CONTEXTS.map((c) => c.name);
/** Ordered pairs (actor, target) of distinct contexts: 7 × 6 = 42. */
const CROSS_PAIRS = CONTEXTS.flatMap((actor) => CONTEXTS.filter((target) => target !== actor).map((target) => [actor, target] as const));

/* ---------- the endpoint families ---------- */

interface Ctx {
  spec: ContextSpec;
  /** The organization the context acts as: the account's own, or the tenant. */
  orgId: string;
  caller: Caller;
  /** Family name → the context's resource as its POST answered. */
  created: Record<string, any>;
  /** Family name → ids the organization already had before the matrix made anything (a tenant's starter data). */
  baseline: Record<string, string[]>;
  organizationName: string;
}

interface Family {
  /** `agents`: also the key of `Ctx.created`. */
  name: string;
  path: string;
  /** snake_case: another context's id is 404 `<resource>_not_found`. */
  resource: string;
  idPrefix: string;
  /** Where the rows live (org_id column): only to learn a tenant's starter rows. */
  table: string;
  /** A valid create body for the context; absent for a list-only family. */
  create?: (c: Ctx) => Record<string, unknown>;
  readOne: boolean;
  /** The intruder's PATCH (a valid body), when the family has PATCH. */
  intrusion?: Record<string, unknown>;
  /** The owner's own PATCH in the controls: must answer 200 with these fields. */
  ownUpdate?: (c: Ctx) => Record<string, unknown>;
  deletable: boolean;
  /** The pairs (actor, owner) where the actor reads the owner's resource by id (CONTRACT.md §5: a reseller its tenants' events). */
  readsAcross?: (actor: ContextSpec, owner: ContextSpec) => boolean;
}

/** The actor is a reseller acting as itself, the owner one of its tenants. */
const resellerOverOwnTenant = (actor: ContextSpec, owner: ContextSpec) =>
  !actor.tenant && actor.account !== 'O' && owner.tenant && owner.account === actor.account;

const FAMILIES: Family[] = [
  {
    name: 'agents',
    path: '/v1/agents',
    resource: 'agent',
    idPrefix: 'agt',
    table: 'agents',
    create: (c) => ({ name: `Agent of ${c.spec.name}`, greeting: `Hello from ${c.spec.name}` }),
    readOne: true,
    intrusion: { name: 'Hijacked' },
    ownUpdate: (c) => ({ name: `Agent of ${c.spec.name}, renamed` }),
    deletable: true,
  },
  {
    name: 'contacts',
    path: '/v1/contacts',
    resource: 'contact',
    idPrefix: 'con',
    table: 'contacts',
    create: (c) => ({ name: `Contact of ${c.spec.name}`, phone_number: uniquePhone(), metadata: { owner: c.spec.name } }),
    readOne: true,
    intrusion: { name: 'Hijacked', metadata: { owner: 'intruder' } },
    ownUpdate: (c) => ({ name: `Contact of ${c.spec.name}, renamed` }),
    deletable: true,
  },
  {
    name: 'locations',
    path: '/v1/locations',
    resource: 'location',
    idPrefix: 'loc',
    table: 'locations',
    create: (c) => ({ name: `Location of ${c.spec.name}`, address: `1 ${c.spec.name} Street` }),
    readOne: true,
    intrusion: { name: 'Hijacked' },
    ownUpdate: (c) => ({ address: `2 ${c.spec.name} Street` }),
    deletable: true,
  },
  {
    name: 'services',
    path: '/v1/services',
    resource: 'service',
    idPrefix: 'svc',
    table: 'services',
    create: (c) => ({ name: `Service of ${c.spec.name}`, duration_minutes: 45 }),
    readOne: true,
    intrusion: { name: 'Hijacked', duration_minutes: 5 },
    ownUpdate: () => ({ duration_minutes: 60 }),
    deletable: true,
  },
  {
    name: 'phone-numbers',
    path: '/v1/phone-numbers',
    resource: 'phone_number',
    idPrefix: 'pn',
    table: 'phone_numbers',
    create: (c) => ({ agent_id: c.created.agents.id }),
    readOne: true,
    intrusion: { agent_id: null },
    ownUpdate: () => ({ agent_id: null }),
    deletable: true,
  },
  {
    name: 'campaigns',
    path: '/v1/campaigns',
    resource: 'campaign',
    idPrefix: 'cmp',
    table: 'campaigns',
    create: (c) => ({ name: `Campaign of ${c.spec.name}`, agent_id: c.created.agents.id, contact_ids: [c.created.contacts.id] }),
    readOne: true,
    intrusion: { name: 'Hijacked' },
    ownUpdate: (c) => ({ name: `Campaign of ${c.spec.name}, renamed` }),
    deletable: false,
  },
  {
    // No worker runs here: the call stays queued, which is all the matrix needs.
    name: 'calls',
    path: '/v1/calls',
    resource: 'call',
    idPrefix: 'call',
    table: 'calls',
    create: (c) => ({ agent_id: c.created.agents.id, contact_id: c.created.contacts.id, simulate: { duration_seconds: 1 } }),
    readOne: true,
    deletable: false,
  },
  {
    // A reseller's list also bars its tenants' calls, but is not shown inside them: each list is its context's own.
    name: 'do-not-call',
    path: '/v1/do-not-call',
    resource: 'do_not_call_entry',
    idPrefix: 'dnc',
    table: 'do_not_call_entries',
    create: () => ({ phone_number: uniquePhone(), reason: 'Asked not to be called' }),
    readOne: false,
    deletable: true,
  },
  {
    // A reseller's own endpoint gets its tenants' events too (CONTRACT.md §5); its port refuses, and no webhooks worker runs here.
    name: 'webhook-endpoints',
    path: '/v1/webhook-endpoints',
    resource: 'webhook_endpoint',
    idPrefix: 'whe',
    table: 'webhook_endpoints',
    create: (c) => ({
      name: `Hooks of ${c.spec.name}`,
      url: 'http://127.0.0.1:9/hooks',
      secret: `secret of ${c.spec.name}`,
      outcomes: [],
      ...(RESELLER_NAMES.includes(c.spec.name) ? { tenant_events: 'all' } : {}),
    }),
    readOne: true,
    intrusion: { name: 'Hijacked', url: 'https://intruder.example.com/hooks' },
    ownUpdate: (c) => ({ name: `Hooks of ${c.spec.name}, renamed` }),
    deletable: true,
  },
  // Read only, and nothing sends texts here: each context's list must still be its own (empty).
  { name: 'messages', path: '/v1/messages', resource: 'message', idPrefix: 'msg', table: 'messages', readOne: false, deletable: false },
  // Read only: each context's one event is its call's `call.queued` (found after the calls are made). A
  // reseller acting as itself also reads its tenants' by id, as its feed with include_tenants lists them.
  {
    name: 'events',
    path: '/v1/events',
    resource: 'event',
    idPrefix: 'evt',
    table: 'call_events',
    readOne: true,
    deletable: false,
    readsAcross: resellerOverOwnTenant,
  },
];
const OWNED = FAMILIES.filter((f) => f.create);

interface Operation {
  method: 'GET' | 'PATCH' | 'DELETE';
  applies(f: Family): boolean;
  send(caller: Caller, f: Family, id: string): Promise<Response>;
}

const OPERATIONS: Operation[] = [
  { method: 'GET', applies: (f) => f.readOne, send: (c, f, id) => c.get(`${f.path}/${id}`) },
  { method: 'PATCH', applies: (f) => f.intrusion !== undefined, send: (c, f, id) => c.patch(`${f.path}/${id}`, f.intrusion) },
  { method: 'DELETE', applies: (f) => f.deletable, send: (c, f, id) => c.delete(`${f.path}/${id}`) },
];

/* ---------- state made in `before` ---------- */

interface Account {
  id: string;
  /** The owner key from the operator, and one made through POST /v1/api-keys. */
  keys: Array<{ keyId: string; key: string }>;
  inviteId: string;
  /** A reseller's key restricted to its first tenant (CONTRACT.md §5), made through POST /v1/api-keys. */
  restricted?: { keyId: string; key: string; tenant: string };
}

const accounts = {} as Record<AccountName, Account>;
const ctx = {} as Record<string, Ctx>;
/** Every id the matrix knows → the context owning it. */
const ownerOf = new Map<string, string>();
/** Each tenant as its reseller read it (and its limits and resale prices) before any intrusion. */
const tenantSnapshots: Record<string, { tenant: any; limits: any; prices: any }> = {};

const unknownId = (prefix: string) => `${prefix}_${'0'.repeat(22)}`;
const UNKNOWN_TENANT = unknownId('ten');
const keyCaller = (account: AccountName, i: number, headers: Record<string, string> = {}) => asCaller(accounts[account].keys[i].key, headers);

/* ---------- checks that report instead of stopping, so a failure shows the whole matrix ---------- */

/** What is wrong with `res` as the CONTRACT.md §2 error (status, code, message), or null. */
function wrongError(res: Response, status: number, code: string): string | null {
  const error = res.body?.error;
  const ok =
    res.status === status &&
    /^application\/json/.test(res.headers['content-type'] ?? '') &&
    error?.code === code &&
    typeof error.message === 'string' &&
    error.message !== '';
  return ok ? null : `expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 300)}`;
}

/** Whether `res` (about `id`) tells anything the answer about an unknown id (`unknown`, about `otherId`) does not. */
function differsFromUnknown(res: Response, id: string, unknown: Response, otherId: string): string | null {
  const mine = JSON.stringify(res.body).split(id).join('<id>');
  const theirs = JSON.stringify(unknown.body).split(otherId).join('<id>');
  return res.status === unknown.status && mine === theirs ? null : `answer differs from an unknown id's: ${res.status} ${mine} vs ${unknown.status} ${theirs}`;
}

class Report {
  readonly failures: string[] = [];
  cases = 0;
  check(where: string, failure: string | null): void {
    this.cases++;
    if (failure) this.failures.push(`${where}: ${failure}`);
  }
  assert(expectedCases: number): void {
    expect(this.failures, `${this.failures.length} of ${this.cases} cases wrong:\n  ${this.failures.join('\n  ')}`).to.deep.equal([]);
    expect(this.cases, 'cases checked').to.equal(expectedCases);
  }
}

const sorted = (ids: string[]) => [...ids].sort();
const describeIds = (ids: string[]) => ids.map((id) => `${id} (${ownerOf.get(id) ?? 'unknown to the matrix'})`).join(', ');

/** Compares a list's ids with the expected ones, naming whose the extra ones are. */
function wrongList(listed: string[], expected: string[]): string | null {
  const extra = listed.filter((id) => !expected.includes(id));
  const missing = expected.filter((id) => !listed.includes(id));
  const duplicated = listed.length !== new Set(listed).size;
  if (!extra.length && !missing.length && !duplicated) return null;
  return `extra: [${describeIds(extra)}] missing: [${describeIds(missing)}]${duplicated ? ' (duplicates)' : ''}`;
}

async function idsInDb(table: string, orgId: string): Promise<string[]> {
  return (await db.query(`SELECT id FROM ${table} WHERE org_id = $1`, [orgId])).map((r: { id: string }) => r.id);
}

/** POST that must answer 201; returns the body. */
async function made(caller: Caller, path: string, body: Record<string, unknown>, what: string): Promise<any> {
  const res = await caller.post(path, body);
  expect(res.status, `${what}: ${res.text}`).to.equal(201);
  return res.body;
}

describe('isolation matrix: resellers, their tenants and an ordinary organization (SPEC.md §1, §4.1, §5, §7)', () => {
  before(async function () {
    this.timeout(120_000);
    const r1 = await reseller({ name: 'Reseller One' });
    const r2 = await reseller({ name: 'Reseller Two' });
    const o = await createOrg({ name: 'Ordinary', balance: '100.00', rates: { per_minute: '0.120000', per_text: '0.010000' } });
    for (const [name, org] of [
      ['R1', r1],
      ['R2', r2],
      ['O', o],
    ] as const) {
      accounts[name] = { id: org.id, keys: [{ keyId: org.keyId, key: org.key }], inviteId: '' };
    }
    const tenantIds: Record<string, string> = {};
    for (const [name, owner] of [
      ['R1a', r1],
      ['R1b', r1],
      ['R2a', r2],
      ['R2b', r2],
    ] as const) {
      const industry = name.endsWith('a') ? 'dental' : 'salon';
      tenantIds[name] = (await createTenant(owner, { name: `Tenant ${name}`, industry, external_ref: `ref-${name}` })).id;
    }

    for (const spec of CONTEXTS) {
      const account = accounts[spec.account];
      const orgId = spec.tenant ? tenantIds[spec.name] : account.id;
      const c: Ctx = {
        spec,
        orgId,
        caller: asCaller(account.keys[0].key, spec.tenant ? { 'X-Tenant-Id': orgId } : {}),
        created: {},
        baseline: {},
        organizationName: '',
      };
      ctx[spec.name] = c;
      ownerOf.set(orgId, spec.name);
      for (const family of FAMILIES) {
        c.baseline[family.name] = await idsInDb(family.table, orgId);
        for (const id of c.baseline[family.name]) ownerOf.set(id, spec.name);
      }
      for (const family of OWNED) {
        c.created[family.name] = await made(c.caller, family.path, family.create!(c), `${spec.label}: POST ${family.path}`);
        ownerOf.set(c.created[family.name].id, spec.name);
      }
      const events = await c.caller.get(`/v1/events?call_id=${c.created.calls.id}`);
      expect([events.status, events.body.data?.length], events.text).to.deep.equal([200, 1]);
      c.created.events = events.body.data[0];
      ownerOf.set(c.created.events.id, spec.name);
      const sender = await c.caller.put('/v1/sms-sender', { phone_number: c.created['phone-numbers'].phone_number });
      expect(sender.status, sender.text).to.equal(200);
      const organization = await c.caller.get('/v1/organization');
      expect(organization.status, organization.text).to.equal(200);
      c.organizationName = organization.body.name;
    }

    for (const spec of ACCOUNT_CONTEXTS) {
      const account = accounts[spec.account];
      const key = await made(
        ctx[spec.name].caller,
        '/v1/api-keys',
        { label: `second key of ${spec.name}`, permissions: ['operate', 'api_keys'] },
        `${spec.name}: POST /v1/api-keys`,
      );
      account.keys.push({ keyId: key.key_id, key: key.key });
      account.inviteId = (
        await made(
          ctx[spec.name].caller,
          '/v1/invites',
          { email: uniqueEmail(`invitee-${spec.name}`), capabilities: ['operate'] },
          `${spec.name}: POST /v1/invites`,
        )
      ).id;
      for (const { keyId } of account.keys) ownerOf.set(keyId, spec.name);
      ownerOf.set(account.inviteId, spec.name);
    }

    for (const spec of RESELLER_CONTEXTS) {
      const tenant = `${spec.name}a`;
      const key = await made(
        ctx[spec.name].caller,
        '/v1/api-keys',
        { label: `${spec.name}'s key for ${tenant} only`, permissions: ['operate', 'settings', 'webhooks'], tenant_ids: [ctx[tenant].orgId] },
        `${spec.name}: POST /v1/api-keys restricted to ${tenant}`,
      );
      accounts[spec.account].restricted = { keyId: key.key_id, key: key.key, tenant };
      ownerOf.set(key.key_id, spec.name);
    }

    for (const spec of TENANT_CONTEXTS) {
      const owner = ctx[spec.account].caller;
      const tenant = await owner.get(`/v1/tenants/${ctx[spec.name].orgId}`);
      const limits = await owner.get(`/v1/tenants/${ctx[spec.name].orgId}/limits`);
      const prices = await owner.put(`/v1/tenants/${ctx[spec.name].orgId}/prices`, { per_minute: '0.200000', per_text: '0.020000' });
      expect([tenant.status, limits.status, prices.status], tenant.text + limits.text + prices.text).to.deep.equal([200, 200, 200]);
      tenantSnapshots[spec.name] = { tenant: tenant.body, limits: limits.body, prices: prices.body };
    }
  });

  after(async () => {
    // Its endpoints have deliveries waiting: a later test's webhooks worker would try them at a closed port.
    await db.query('DELETE FROM webhook_endpoints WHERE org_id = ANY($1)', [Object.values(ctx).map((c) => c.orgId)]);
  });

  describe('each context reaches its own (the controls that make the 404s below mean something)', () => {
    for (const family of OWNED.filter((f) => f.readOne)) {
      it(`GET ${family.path}/{id}: every context reads its own ${family.resource}, 200, as created`, async () => {
        const report = new Report();
        for (const spec of CONTEXTS) {
          const c = ctx[spec.name];
          const res = await c.caller.get(`${family.path}/${c.created[family.name].id}`);
          report.check(
            spec.label,
            res.status !== 200
              ? `${res.status} ${res.text}`
              : JSON.stringify(res.body) === JSON.stringify(c.created[family.name])
                ? null
                : `read ${res.text}, created ${JSON.stringify(c.created[family.name])}`,
          );
        }
        report.assert(CONTEXTS.length);
      });
    }

    it('GET /v1/organization answers every context with its own organization', async () => {
      const report = new Report();
      for (const spec of CONTEXTS) {
        const res = await ctx[spec.name].caller.get('/v1/organization');
        report.check(spec.label, res.status === 200 && res.body.id === ctx[spec.name].orgId ? null : `${res.status} ${res.text}`);
      }
      report.assert(CONTEXTS.length);
    });
  });

  describe("another context's resource is unknown: 404 <resource>_not_found, never 200/204, no hint", () => {
    for (const family of FAMILIES) {
      for (const op of OPERATIONS.filter((o) => o.applies(family))) {
        it(`${op.method} ${family.path}/{id}: every context × every other context's ${family.resource} (${CROSS_PAIRS.length} pairs) is 404 ${family.resource}_not_found`, async () => {
          const code = `${family.resource}_not_found`;
          const report = new Report();
          const unknown: Record<string, Response> = {};
          for (const spec of CONTEXTS) {
            unknown[spec.name] = await op.send(ctx[spec.name].caller, family, unknownId(family.idPrefix));
            report.check(`${spec.label}, an id that never existed`, wrongError(unknown[spec.name], 404, code));
          }
          for (const [actor, target] of CROSS_PAIRS) {
            const id = ctx[target.name].created[family.name].id;
            const res = await op.send(ctx[actor.name].caller, family, id);
            const reads = op.method === 'GET' && family.readsAcross?.(actor, target);
            report.check(
              `${actor.label} → ${target.name}'s ${family.resource} ${id}${reads ? ' (its own tenant’s: read, as created)' : ''}`,
              reads
                ? res.status === 200 && JSON.stringify(res.body) === JSON.stringify(ctx[target.name].created[family.name])
                  ? null
                  : `${res.status} ${res.text}`
                : (wrongError(res, 404, code) ?? differsFromUnknown(res, id, unknown[actor.name], unknownId(family.idPrefix))),
            );
          }
          report.assert(CONTEXTS.length + CROSS_PAIRS.length);
        });
      }
    }
  });

  describe("another context's resource cannot be used by reference", () => {
    const REFERENCES: Array<{ name: string; send(own: Ctx, other: Ctx): Promise<Response>; wrong(res: Response, other: Ctx): string | null }> = [
      {
        name: "POST /v1/calls with the other's agent: 404 agent_not_found",
        send: (own, other) => own.caller.post('/v1/calls', { agent_id: other.created.agents.id, contact_id: own.created.contacts.id }),
        wrong: (res) => wrongError(res, 404, 'agent_not_found'),
      },
      {
        name: "POST /v1/calls with the other's contact: 404 contact_not_found",
        send: (own, other) => own.caller.post('/v1/calls', { agent_id: own.created.agents.id, contact_id: other.created.contacts.id }),
        wrong: (res) => wrongError(res, 404, 'contact_not_found'),
      },
      {
        name: "POST /v1/calls in the other's campaign: 404 campaign_not_found",
        send: (own, other) =>
          own.caller.post('/v1/calls', { agent_id: own.created.agents.id, contact_id: own.created.contacts.id, campaign_id: other.created.campaigns.id }),
        wrong: (res) => wrongError(res, 404, 'campaign_not_found'),
      },
      {
        name: "POST /v1/campaigns with the other's agent: 404 agent_not_found",
        send: (own, other) =>
          own.caller.post('/v1/campaigns', { name: 'Intrusion', agent_id: other.created.agents.id, contact_ids: [own.created.contacts.id] }),
        wrong: (res) => wrongError(res, 404, 'agent_not_found'),
      },
      {
        name: "POST /v1/campaigns with the other's contact: 404 contact_not_found",
        send: (own, other) =>
          own.caller.post('/v1/campaigns', {
            name: 'Intrusion',
            agent_id: own.created.agents.id,
            contact_ids: [own.created.contacts.id, other.created.contacts.id],
          }),
        wrong: (res) => wrongError(res, 404, 'contact_not_found'),
      },
      {
        name: "POST /v1/phone-numbers answered by the other's agent: 404 agent_not_found",
        send: (own, other) => own.caller.post('/v1/phone-numbers', { agent_id: other.created.agents.id }),
        wrong: (res) => wrongError(res, 404, 'agent_not_found'),
      },
      {
        name: "PATCH /v1/phone-numbers/{own} to the other's agent: 404 agent_not_found",
        send: (own, other) => own.caller.patch(`/v1/phone-numbers/${own.created['phone-numbers'].id}`, { agent_id: other.created.agents.id }),
        wrong: (res) => wrongError(res, 404, 'agent_not_found'),
      },
      {
        name: "POST /v1/phone-numbers asking for the other's number: 409 phone_number_taken",
        send: (own, other) => own.caller.post('/v1/phone-numbers', { phone_number: other.created['phone-numbers'].phone_number }),
        wrong: (res) => wrongError(res, 409, 'phone_number_taken'),
      },
      {
        name: "PUT /v1/sms-sender with the other's number: 400 invalid_request on phone_number",
        send: (own, other) => own.caller.put('/v1/sms-sender', { phone_number: other.created['phone-numbers'].phone_number }),
        wrong: (res) => wrongError(res, 400, 'invalid_request') ?? (res.body.error.details?.[0]?.path === 'phone_number' ? null : res.text),
      },
      {
        name: "GET /v1/calls?campaign_id=<the other's campaign>: 200, empty",
        send: (own, other) => own.caller.get(`/v1/calls?campaign_id=${other.created.campaigns.id}`),
        wrong: (res) => (res.status === 200 && Array.isArray(res.body.data) && res.body.data.length === 0 ? null : `${res.status} ${res.text.slice(0, 300)}`),
      },
      {
        name: "GET /v1/webhook-deliveries?endpoint_id=<the other's endpoint>: 200, empty",
        send: (own, other) => own.caller.get(`/v1/webhook-deliveries?endpoint_id=${other.created['webhook-endpoints'].id}`),
        wrong: (res) => (res.status === 200 && Array.isArray(res.body.data) && res.body.data.length === 0 ? null : `${res.status} ${res.text.slice(0, 300)}`),
      },
      {
        name: "POST /v1/webhook-endpoints/{the other's}/recover: 404 webhook_endpoint_not_found",
        send: (own, other) => own.caller.post(`/v1/webhook-endpoints/${other.created['webhook-endpoints'].id}/recover`, { since: '2026-01-01T00:00:00Z' }),
        wrong: (res) => wrongError(res, 404, 'webhook_endpoint_not_found'),
      },
      {
        name: "GET /v1/contacts?phone_number=<the other's contact's number>: 200, empty",
        send: (own, other) => own.caller.get(`/v1/contacts?phone_number=${encodeURIComponent(other.created.contacts.phone_number)}`),
        wrong: (res) => (res.status === 200 && Array.isArray(res.body.data) && res.body.data.length === 0 ? null : `${res.status} ${res.text.slice(0, 300)}`),
      },
    ];

    for (const reference of REFERENCES) {
      it(`${reference.name} (${CROSS_PAIRS.length} pairs)`, async () => {
        const report = new Report();
        for (const [actor, target] of CROSS_PAIRS) {
          const res = await reference.send(ctx[actor.name], ctx[target.name]);
          report.check(`${actor.label} using ${target.name}'s`, reference.wrong(res, ctx[target.name]));
        }
        report.assert(CROSS_PAIRS.length);
      });
    }
  });

  describe('reseller-wide webhook endpoints and the delivery log (CONTRACT.md §5)', () => {
    /** Every context's deliveries as its own list shows them, after the relay fanned out every context's call.queued. */
    const listed: Record<string, any[]> = {};
    const tenantsOf = (account: string) => TENANT_CONTEXTS.filter((t) => t.account === account);
    before(async function () {
      this.timeout(60_000);
      while ((await createRelay(db).batch()) > 0);
      for (const spec of CONTEXTS) listed[spec.name] = (await walkList(ctx[spec.name].caller, '/v1/webhook-deliveries', 100)).items;
    });

    /** `event endpoint tenant_id` of a delivery of `of`'s event to `to`'s endpoint. */
    const line = (of: ContextSpec, to: ContextSpec) =>
      `${ctx[of.name].created.events.id} ${ctx[to.name].created['webhook-endpoints'].id} ${of.tenant ? ctx[of.name].orgId : null}`;
    const lines = (deliveries: any[]) => deliveries.map((d) => `${d.event_id} ${d.endpoint_id} ${d.tenant_id}`).sort();

    it(`GET /v1/webhook-deliveries in each of the ${CONTEXTS.length} contexts lists its own endpoint's deliveries, a reseller's also its own tenants' events (and no other's)`, () => {
      const report = new Report();
      for (const spec of CONTEXTS) {
        const expected = [line(spec, spec), ...(spec.tenant ? [] : tenantsOf(spec.account).map((t) => line(t, spec)))];
        report.check(spec.label, wrongList(lines(listed[spec.name]), expected.sort()));
      }
      report.assert(CONTEXTS.length);
    });

    it('a reseller’s tenant_id filter lists exactly that tenant’s; any other id is 400 naming tenant_id, another reseller’s tenant as an unknown id', async () => {
      const report = new Report();
      for (const spec of ACCOUNT_CONTEXTS) {
        const caller = ctx[spec.name].caller;
        const unknown = await caller.get(`/v1/webhook-deliveries?tenant_id=${UNKNOWN_TENANT}`);
        report.check(`${spec.label}: an unknown tenant`, wrongError(unknown, 400, 'invalid_request'));
        for (const target of TENANT_CONTEXTS) {
          const res = await caller.get(`/v1/webhook-deliveries?tenant_id=${ctx[target.name].orgId}`);
          const own = target.account === spec.account;
          report.check(
            `${spec.label}: tenant_id=${target.name}`,
            own
              ? res.status === 200 && res.body.next_cursor === null
                ? wrongList(lines(res.body.data), [line(target, spec)])
                : `${res.status} ${res.text}`
              : (wrongError(res, 400, 'invalid_request') ?? differsFromUnknown(res, ctx[target.name].orgId, unknown, UNKNOWN_TENANT)),
          );
        }
      }
      for (const spec of TENANT_CONTEXTS) {
        const res = await ctx[spec.name].caller.get(`/v1/webhook-deliveries?tenant_id=${ctx[spec.name].orgId}`);
        report.check(`${spec.label}: tenant_id=its own id`, wrongError(res, 400, 'invalid_request'));
      }
      report.assert(ACCOUNT_CONTEXTS.length * (1 + TENANT_CONTEXTS.length) + TENANT_CONTEXTS.length);
    });

    it(`GET /v1/webhook-deliveries/{id} and its retry: every other context's delivery is 404 webhook_delivery_not_found, as an unknown id (${CROSS_PAIRS.length} pairs)`, async () => {
      const report = new Report();
      const unknownDelivery = unknownId('dlv');
      let cases = 0;
      for (const [actor, target] of CROSS_PAIRS) {
        const caller = ctx[actor.name].caller;
        const read = (id: string) => caller.get(`/v1/webhook-deliveries/${id}`);
        const retry = (id: string) => caller.post(`/v1/webhook-deliveries/${id}/retry`, {});
        for (const send of [read, retry]) {
          const unknown = await send(unknownDelivery);
          for (const { id } of listed[target.name]) {
            const res = await send(id);
            cases++;
            report.check(
              `${actor.label} → ${target.name}'s delivery ${id}`,
              wrongError(res, 404, 'webhook_delivery_not_found') ?? differsFromUnknown(res, id, unknown, unknownDelivery),
            );
          }
        }
      }
      // Each context's own delivery at least, for each other context: the loop cannot pass empty.
      expect(cases).to.be.at.least(CROSS_PAIRS.length * 2);
      report.assert(cases);
    });

    it('tenant_ids naming another reseller’s tenant is 400 as an unknown id; "all" is 403 not_a_reseller for O; either field is 400 inside every tenant', async () => {
      const report = new Report();
      const body = (fields: object) => ({ name: 'Intrusion', url: 'http://127.0.0.1:9/hooks', secret: 'an intruding secret', outcomes: [], ...fields });
      for (const spec of RESELLER_CONTEXTS) {
        const c = ctx[spec.name];
        const one = `/v1/webhook-endpoints/${c.created['webhook-endpoints'].id}`;
        const unknownCreate = await c.caller.post('/v1/webhook-endpoints', body({ tenant_events: 'all', tenant_ids: [UNKNOWN_TENANT] }));
        const unknownPatch = await c.caller.patch(one, { tenant_ids: [UNKNOWN_TENANT] });
        for (const target of TENANT_CONTEXTS.filter((t) => t.account !== spec.account)) {
          const id = ctx[target.name].orgId;
          const create = await c.caller.post('/v1/webhook-endpoints', body({ tenant_events: 'all', tenant_ids: [id] }));
          report.check(
            `${spec.label}: POST naming ${target.name}`,
            wrongError(create, 400, 'invalid_request') ?? differsFromUnknown(create, id, unknownCreate, UNKNOWN_TENANT),
          );
          const patch = await c.caller.patch(one, { tenant_ids: [id] });
          report.check(
            `${spec.label}: PATCH naming ${target.name}`,
            wrongError(patch, 400, 'invalid_request') ?? differsFromUnknown(patch, id, unknownPatch, UNKNOWN_TENANT),
          );
        }
      }
      const o = ctx.O;
      report.check(
        'O: POST tenant_events all',
        wrongError(await o.caller.post('/v1/webhook-endpoints', body({ tenant_events: 'all' })), 403, 'not_a_reseller'),
      );
      report.check(
        'O: PATCH tenant_events all',
        wrongError(await o.caller.patch(`/v1/webhook-endpoints/${o.created['webhook-endpoints'].id}`, { tenant_events: 'all' }), 403, 'not_a_reseller'),
      );
      for (const spec of TENANT_CONTEXTS) {
        const c = ctx[spec.name];
        report.check(
          `${spec.label}: POST tenant_events`,
          wrongError(await c.caller.post('/v1/webhook-endpoints', body({ tenant_events: 'none' })), 400, 'invalid_request'),
        );
        report.check(
          `${spec.label}: PATCH tenant_ids`,
          wrongError(await c.caller.patch(`/v1/webhook-endpoints/${c.created['webhook-endpoints'].id}`, { tenant_ids: [] }), 400, 'invalid_request'),
        );
      }
      report.assert(RESELLER_CONTEXTS.length * 2 * 2 + 2 + TENANT_CONTEXTS.length * 2);
    });
  });

  describe('X-Tenant-Id naming a tenant that is not one of the caller’s: 404 tenant_not_found, the same as an unknown id', () => {
    const REQUESTS: Array<[string, (c: Caller, target: Ctx) => Promise<Response>]> = [
      ['GET /v1/organization', (c) => c.get('/v1/organization')],
      ['PATCH /v1/organization', (c) => c.patch('/v1/organization', { name: 'Hijacked' })],
      ['GET /v1/agents', (c) => c.get('/v1/agents')],
      ['GET /v1/agents/{their agent}', (c, t) => c.get(`/v1/agents/${t.created.agents.id}`)],
      ['DELETE /v1/locations/{their location}', (c, t) => c.delete(`/v1/locations/${t.created.locations.id}`)],
      ['POST /v1/contacts', (c) => c.post('/v1/contacts', { name: 'Intruder', phone_number: uniquePhone() })],
      ['GET /v1/calls/{their call}', (c, t) => c.get(`/v1/calls/${t.created.calls.id}`)],
      ['PUT /v1/sms-sender', (c) => c.put('/v1/sms-sender', { phone_number: null })],
    ];
    /** Every account with every tenant that is not its own: R1 × 2, R2 × 2, O × 4. */
    const FOREIGN_TENANTS = ACCOUNT_CONTEXTS.flatMap((actor) => TENANT_CONTEXTS.filter((t) => t.account !== actor.account).map((t) => [actor, t] as const));

    it(`another reseller's tenant, and any tenant for O (${FOREIGN_TENANTS.length} account × tenant pairs × ${REQUESTS.length} requests)`, async () => {
      const report = new Report();
      for (const [actor, target] of FOREIGN_TENANTS) {
        for (const [name, send] of REQUESTS) {
          const unknown = await send(keyCaller(actor.account, 0, { 'X-Tenant-Id': UNKNOWN_TENANT }), ctx[target.name]);
          const res = await send(keyCaller(actor.account, 0, { 'X-Tenant-Id': ctx[target.name].orgId }), ctx[target.name]);
          report.check(
            `${actor.name} with X-Tenant-Id ${target.name}: ${name}`,
            wrongError(res, 404, 'tenant_not_found') ?? differsFromUnknown(res, ctx[target.name].orgId, unknown, UNKNOWN_TENANT),
          );
        }
      }
      report.assert(FOREIGN_TENANTS.length * REQUESTS.length);
    });

    it('an organization that is not a tenant of the caller (its own, another account) is no tenant either', async () => {
      const report = new Report();
      for (const actor of ACCOUNT_CONTEXTS) {
        const unknown = await keyCaller(actor.account, 0, { 'X-Tenant-Id': UNKNOWN_TENANT }).get('/v1/organization');
        for (const target of ACCOUNT_CONTEXTS) {
          const res = await keyCaller(actor.account, 0, { 'X-Tenant-Id': ctx[target.name].orgId }).get('/v1/organization');
          report.check(
            `${actor.name} with X-Tenant-Id ${target.name}`,
            wrongError(res, 404, 'tenant_not_found') ?? differsFromUnknown(res, ctx[target.name].orgId, unknown, UNKNOWN_TENANT),
          );
        }
      }
      report.assert(ACCOUNT_CONTEXTS.length ** 2);
    });

    it("the account's second key (made through the API) gets the same answers as its owner key", async () => {
      const report = new Report();
      for (const [actor, target] of FOREIGN_TENANTS) {
        const res = await keyCaller(actor.account, 1, { 'X-Tenant-Id': ctx[target.name].orgId }).get(`/v1/contacts/${ctx[target.name].created.contacts.id}`);
        report.check(`${actor.name}'s second key with X-Tenant-Id ${target.name}`, wrongError(res, 404, 'tenant_not_found'));
      }
      for (const target of TENANT_CONTEXTS) {
        const res = await keyCaller(target.account, 1, { 'X-Tenant-Id': ctx[target.name].orgId }).get(`/v1/contacts/${ctx[target.name].created.contacts.id}`);
        report.check(`${target.account}'s second key inside its own ${target.name} (control)`, res.status === 200 ? null : `${res.status} ${res.text}`);
      }
      report.assert(FOREIGN_TENANTS.length + TENANT_CONTEXTS.length);
    });
  });

  describe('the tenant endpoints', () => {
    const ROUTES: Array<[string, (c: Caller, id: string) => Promise<Response>]> = [
      ['GET /v1/tenants/{id}', (c, id) => c.get(`/v1/tenants/${id}`)],
      ['PATCH /v1/tenants/{id}', (c, id) => c.patch(`/v1/tenants/${id}`, { name: 'Hijacked', external_ref: 'hijacked', disabled: true })],
      ['GET /v1/tenants/{id}/limits', (c, id) => c.get(`/v1/tenants/${id}/limits`)],
      [
        'PATCH /v1/tenants/{id}/limits',
        (c, id) => c.patch(`/v1/tenants/${id}/limits`, { max_concurrent_calls: 1, max_calls_per_hour: 1, monthly_spend_limit: '0.000000' }),
      ],
      ['GET /v1/tenants/{id}/usage', (c, id) => c.get(`/v1/tenants/${id}/usage`)],
      ['GET /v1/tenants/{id}/prices', (c, id) => c.get(`/v1/tenants/${id}/prices`)],
      ['PUT /v1/tenants/{id}/prices', (c, id) => c.put(`/v1/tenants/${id}/prices`, { per_minute: '999.000000', per_text: '999.000000' })],
    ];
    const OTHER_RESELLERS_TENANTS = RESELLER_CONTEXTS.flatMap((actor) =>
      TENANT_CONTEXTS.filter((t) => t.account !== actor.account).map((t) => [actor, t] as const),
    );

    it(`another reseller's tenant is 404 tenant_not_found, the same as an unknown id (${OTHER_RESELLERS_TENANTS.length} pairs × ${ROUTES.length} routes)`, async () => {
      const report = new Report();
      for (const [actor, target] of OTHER_RESELLERS_TENANTS) {
        for (const [name, send] of ROUTES) {
          const unknown = await send(ctx[actor.name].caller, UNKNOWN_TENANT);
          const res = await send(ctx[actor.name].caller, ctx[target.name].orgId);
          report.check(
            `${actor.name} → ${target.name}: ${name}`,
            wrongError(res, 404, 'tenant_not_found') ?? differsFromUnknown(res, ctx[target.name].orgId, unknown, UNKNOWN_TENANT),
          );
        }
      }
      report.assert(OTHER_RESELLERS_TENANTS.length * ROUTES.length);
    });

    it(`O gets 403 not_a_reseller for every tenant, whoever owns it (${TENANT_CONTEXTS.length} tenants × ${ROUTES.length} routes, and the list)`, async () => {
      const report = new Report();
      for (const target of TENANT_CONTEXTS) {
        for (const [name, send] of ROUTES)
          report.check(`O → ${target.name}: ${name}`, wrongError(await send(ctx.O.caller, ctx[target.name].orgId), 403, 'not_a_reseller'));
      }
      report.check('O: GET /v1/tenants', wrongError(await ctx.O.caller.get('/v1/tenants'), 403, 'not_a_reseller'));
      report.check('O: GET /v1/tenant-usage', wrongError(await ctx.O.caller.get('/v1/tenant-usage'), 403, 'not_a_reseller'));
      report.assert(TENANT_CONTEXTS.length * ROUTES.length + 2);
    });

    it('each reseller reaches its own tenants on the same routes (control)', async () => {
      const report = new Report();
      for (const target of TENANT_CONTEXTS) {
        const owner = ctx[target.account].caller;
        const id = ctx[target.name].orgId;
        const { limits, prices } = tenantSnapshots[target.name];
        const sends: Array<[string, () => Promise<Response>]> = [
          ['GET /v1/tenants/{id}', () => owner.get(`/v1/tenants/${id}`)],
          ['PATCH /v1/tenants/{id} (same external_ref)', () => owner.patch(`/v1/tenants/${id}`, { external_ref: `ref-${target.name}` })],
          ['GET /v1/tenants/{id}/limits', () => owner.get(`/v1/tenants/${id}/limits`)],
          [
            'PATCH /v1/tenants/{id}/limits (same values)',
            () =>
              owner.patch(`/v1/tenants/${id}/limits`, {
                max_concurrent_calls: limits.max_concurrent_calls,
                max_calls_per_hour: limits.max_calls_per_hour,
                monthly_spend_limit: limits.monthly_spend_limit,
              }),
          ],
          ['GET /v1/tenants/{id}/usage', () => owner.get(`/v1/tenants/${id}/usage`)],
          ['GET /v1/tenants/{id}/prices', () => owner.get(`/v1/tenants/${id}/prices`)],
          [
            'PUT /v1/tenants/{id}/prices (same values)',
            () => owner.put(`/v1/tenants/${id}/prices`, { per_minute: prices.per_minute, per_text: prices.per_text }),
          ],
        ];
        for (const [name, send] of sends) {
          const res = await send();
          report.check(`${target.account} → own ${target.name}: ${name}`, res.status === 200 ? null : `${res.status} ${res.text}`);
        }
      }
      report.assert(TENANT_CONTEXTS.length * ROUTES.length);
    });
  });

  describe('areas closed to tenants: 403 not_available_for_tenant inside every tenant', () => {
    const CLOSED: Array<[string, (c: Caller, inside: Ctx) => Promise<Response>]> = [
      ...CLOSED_AREA_REQUESTS,
      ["DELETE /v1/api-keys/{the reseller's own key}", (c, x) => c.delete(`/v1/api-keys/${accounts[x.spec.account].keys[1].keyId}`)],
      ["DELETE /v1/api-keys/{O's key}", (c) => c.delete(`/v1/api-keys/${accounts.O.keys[1].keyId}`)],
      ['GET /v1/tenants', (c) => c.get('/v1/tenants')],
      ['POST /v1/tenants', (c) => c.post('/v1/tenants', { name: 'Nested', timezone: 'UTC', industry: 'other' })],
      ['GET /v1/tenants/{this tenant}', (c, x) => c.get(`/v1/tenants/${x.orgId}`)],
      ['PATCH /v1/tenants/{this tenant}', (c, x) => c.patch(`/v1/tenants/${x.orgId}`, { name: 'Hijacked' })],
      ['GET /v1/tenants/{this tenant}/usage', (c, x) => c.get(`/v1/tenants/${x.orgId}/usage`)],
      ['GET /v1/tenant-usage', (c) => c.get('/v1/tenant-usage')],
      ['GET /v1/tenants/{this tenant}/prices', (c, x) => c.get(`/v1/tenants/${x.orgId}/prices`)],
      ['PUT /v1/tenants/{this tenant}/prices', (c, x) => c.put(`/v1/tenants/${x.orgId}/prices`, { per_minute: '999.000000', per_text: '999.000000' })],
      ['PUT /v1/booking-page', (c) => c.put('/v1/booking-page', {})],
    ];
    const OPEN_TO_ACCOUNTS = CLOSED.filter(([name]) => name.startsWith('GET ') && !name.includes('tenant'));

    it(`every closed area inside every tenant (${TENANT_CONTEXTS.length} tenants × ${CLOSED.length} requests)`, async () => {
      const report = new Report();
      for (const spec of TENANT_CONTEXTS) {
        for (const [name, send] of CLOSED)
          report.check(`${spec.label}: ${name}`, wrongError(await send(ctx[spec.name].caller, ctx[spec.name]), 403, 'not_available_for_tenant'));
      }
      report.assert(TENANT_CONTEXTS.length * CLOSED.length);
    });

    it(`the same reads answer 200 without X-Tenant-Id (control: ${ACCOUNT_CONTEXTS.length} accounts × ${OPEN_TO_ACCOUNTS.length} reads)`, async () => {
      const report = new Report();
      for (const spec of ACCOUNT_CONTEXTS) {
        for (const [name, send] of OPEN_TO_ACCOUNTS) {
          const res = await send(ctx[spec.name].caller, ctx[spec.name]);
          report.check(`${spec.label}: ${name}`, res.status === 200 ? null : `${res.status} ${res.text}`);
        }
      }
      report.assert(ACCOUNT_CONTEXTS.length * OPEN_TO_ACCOUNTS.length);
    });
  });

  describe("API keys: another account's key cannot be revoked", () => {
    const ACCOUNT_PAIRS = ACCOUNT_CONTEXTS.flatMap((actor) => ACCOUNT_CONTEXTS.filter((t) => t !== actor).map((t) => [actor, t] as const));

    it(`DELETE /v1/api-keys/{id} of each other account's keys is 404 api_key_not_found, like an unknown id (${ACCOUNT_PAIRS.length} pairs × 2 keys)`, async () => {
      const report = new Report();
      for (const [actor, target] of ACCOUNT_PAIRS) {
        const unknown = await ctx[actor.name].caller.delete(`/v1/api-keys/${unknownId('key')}`);
        for (const { keyId } of accounts[target.account].keys) {
          const res = await ctx[actor.name].caller.delete(`/v1/api-keys/${keyId}`);
          report.check(
            `${actor.name} revoking ${target.name}'s ${keyId}`,
            wrongError(res, 404, 'api_key_not_found') ?? differsFromUnknown(res, keyId, unknown, unknownId('key')),
          );
        }
      }
      report.assert(ACCOUNT_PAIRS.length * 2);
    });

    it('every key still works afterwards, as its own organization', async () => {
      const report = new Report();
      for (const spec of ACCOUNT_CONTEXTS) {
        for (const [i, { keyId }] of accounts[spec.account].keys.entries()) {
          const res = await keyCaller(spec.account, i).get('/v1/organization');
          report.check(`${spec.name}'s ${keyId}`, res.status === 200 && res.body.id === ctx[spec.name].orgId ? null : `${res.status} ${res.text}`);
        }
      }
      report.assert(ACCOUNT_CONTEXTS.length * 2);
    });
  });

  describe('a tenant-restricted key (CONTRACT.md §5) reaches its tenant only: never another, nor its own account', () => {
    /** Every route that takes an API key, from the app's own route table. */
    let routes: RouteDoc[] = [];
    before(async () => {
      routes = (await sharedApp()).routes.filter((route) => route.caller === 'member');
    });

    /** The id a route's path parameter takes for a resource of `target`: the matrix's own where it has one, else one that never existed. */
    function idFor(resource: string, target: Ctx): string {
      if (resource === 'tenant') return target.spec.tenant ? target.orgId : (ctx[`${target.spec.account}a`]?.orgId ?? UNKNOWN_TENANT);
      if (resource === 'api_key') return accounts[target.spec.account].keys[0].keyId;
      const family = FAMILIES.find((f) => f.resource === resource);
      return family && target.created[family.name] ? target.created[family.name].id : unknownId(resource);
    }

    /** `route` aimed at `target`'s resources, with a body its owner could send where the matrix has one. */
    function send(caller: Caller, route: RouteDoc, target: Ctx): Promise<Response> {
      const resource = route.params && idParamsResource(route.params);
      const path = route.path.replace(/:\w+/g, () => idFor(resource!, target));
      const family = FAMILIES.find((f) => f.path === route.path.replace(/\/:\w+.*$/, ''));
      if (route.method === 'get') return caller.get(path);
      if (route.method === 'delete') return caller.delete(path);
      const body = route.method === 'post' && !route.params ? family?.create?.(target) : family?.intrusion;
      return caller[route.method](path, body ?? {});
    }

    const RESTRICTED_ACCOUNTS = RESELLER_CONTEXTS.map((c) => c.account);
    /** Where each restricted key is sent: no X-Tenant-Id (its own account), every context but its tenant, an id that never existed. */
    const placesFor = (account: AccountName) => {
      const tenant = accounts[account].restricted!.tenant;
      return [
        { label: 'no X-Tenant-Id', headers: {} as Record<string, string>, target: ctx[account] },
        ...CONTEXTS.filter((c) => c.name !== tenant).map((c) => ({
          label: `X-Tenant-Id ${c.name}`,
          headers: { 'X-Tenant-Id': ctx[c.name].orgId },
          target: ctx[c.name],
        })),
        { label: 'X-Tenant-Id of no organization', headers: { 'X-Tenant-Id': UNKNOWN_TENANT }, target: ctx[account] },
      ];
    };

    it('every route × every place outside its tenant: 403 tenant_not_allowed_for_key, one answer for all (R1 and R2 × 8 places × every route)', async () => {
      expect(routes.length, 'routes taking an API key').to.be.above(60);
      const report = new Report();
      const answers = new Set<string>();
      for (const account of RESTRICTED_ACCOUNTS) {
        const { key } = accounts[account].restricted!;
        for (const place of placesFor(account)) {
          for (const route of routes) {
            const res = await send(asCaller(key, place.headers), route, place.target);
            report.check(
              `${account}'s restricted key, ${place.label}: ${route.method.toUpperCase()} ${route.path}`,
              wrongError(res, 403, 'tenant_not_allowed_for_key'),
            );
            answers.add(res.text);
          }
        }
      }
      report.check('one answer for every place and route', answers.size === 1 ? null : [...answers].join('\n'));
      report.assert(RESTRICTED_ACCOUNTS.length * (CONTEXTS.length + 1) * routes.length + 1);
    });

    it('inside its tenant it reads what is there, as created (control)', async () => {
      const report = new Report();
      for (const account of RESTRICTED_ACCOUNTS) {
        const { key, tenant } = accounts[account].restricted!;
        const inside = asCaller(key, { 'X-Tenant-Id': ctx[tenant].orgId });
        const organization = await inside.get('/v1/organization');
        report.check(`${account}'s restricted key in ${tenant}: GET /v1/organization`, organization.body?.id === ctx[tenant].orgId ? null : organization.text);
        for (const family of FAMILIES.filter((f) => f.readOne)) {
          const res = await inside.get(`${family.path}/${ctx[tenant].created[family.name].id}`);
          report.check(
            `${account}'s restricted key in ${tenant}: GET ${family.path}/{id}`,
            res.status === 200 && JSON.stringify(res.body) === JSON.stringify(ctx[tenant].created[family.name]) ? null : `${res.status} ${res.text}`,
          );
        }
      }
      report.assert(RESTRICTED_ACCOUNTS.length * (1 + FAMILIES.filter((f) => f.readOne).length));
    });
  });

  describe('after every attempt above: lists show exactly each context’s own, and nothing changed', () => {
    for (const family of FAMILIES) {
      it(`GET ${family.path} in each of the ${CONTEXTS.length} contexts lists exactly that context's ${family.name}`, async () => {
        const report = new Report();
        for (const spec of CONTEXTS) {
          const c = ctx[spec.name];
          const expected = [...c.baseline[family.name], ...(c.created[family.name] ? [c.created[family.name].id] : [])];
          const { items } = await walkList(c.caller, family.path, 100);
          // `expected` holds the matrix's own resource: an empty list cannot pass.
          report.check(spec.label, wrongList(sorted(items.map((i) => i.id)), sorted(expected)));
        }
        report.assert(CONTEXTS.length);
      });
    }

    for (const family of OWNED.filter((f) => f.readOne)) {
      it(`every context's ${family.resource} reads exactly as created (the others' PATCH/DELETE/references left it alone)`, async () => {
        const report = new Report();
        for (const spec of CONTEXTS) {
          const c = ctx[spec.name];
          const res = await c.caller.get(`${family.path}/${c.created[family.name].id}`);
          report.check(
            spec.label,
            res.status === 200 && JSON.stringify(res.body) === JSON.stringify(c.created[family.name]) ? null : `${res.status} ${res.text}`,
          );
        }
        report.assert(CONTEXTS.length);
      });
    }

    const ACCOUNT_LISTS: Array<[string, (a: Account) => string[]]> = [
      ['/v1/api-keys', (a) => [...a.keys.map((k) => k.keyId), ...(a.restricted ? [a.restricted.keyId] : [])]],
      ['/v1/invites', (a) => [a.inviteId]],
    ];
    for (const [path, expected] of ACCOUNT_LISTS) {
      it(`GET ${path} in each account lists exactly its own`, async () => {
        const report = new Report();
        for (const spec of ACCOUNT_CONTEXTS) {
          const { items } = await walkList(ctx[spec.name].caller, path, 100);
          report.check(spec.label, wrongList(sorted(items.map((i) => i.key_id ?? i.id)), sorted(expected(accounts[spec.account]))));
        }
        report.assert(ACCOUNT_CONTEXTS.length);
      });
    }

    it('GET /v1/events?include_tenants=true lists exactly each reseller’s own events and its two tenants’; tenant_id exactly that tenant’s', async () => {
      const report = new Report();
      const eventsOf = (names: string[]) => names.flatMap((name) => [...ctx[name].baseline.events, ctx[name].created.events.id]);
      for (const spec of RESELLER_CONTEXTS) {
        const own = CONTEXTS.filter((c) => c.account === spec.account).map((c) => c.name);
        const { items } = await walkList(ctx[spec.name].caller, '/v1/events?include_tenants=true', 100);
        report.check(`${spec.label} include_tenants=true`, wrongList(sorted(items.map((i) => i.id)), sorted(eventsOf(own))));
        for (const tenant of TENANT_CONTEXTS.filter((t) => t.account === spec.account)) {
          const one = await walkList(ctx[spec.name].caller, `/v1/events?tenant_id=${ctx[tenant.name].orgId}`, 100);
          report.check(`${spec.label} tenant_id=${tenant.name}`, wrongList(sorted(one.items.map((i) => i.id)), sorted(eventsOf([tenant.name]))));
        }
      }
      report.assert(RESELLER_CONTEXTS.length * 3);
    });

    it("GET /v1/events?tenant_id= naming another account's tenant, or any organization, is 400 naming tenant_id, the same as an unknown id; O gets 403 not_a_reseller", async () => {
      const report = new Report();
      for (const actor of RESELLER_CONTEXTS) {
        const unknown = await ctx[actor.name].caller.get(`/v1/events?tenant_id=${UNKNOWN_TENANT}`);
        report.check(`${actor.name}: an unknown id`, wrongError(unknown, 400, 'invalid_request'));
        for (const target of CONTEXTS.filter((t) => !(t.tenant && t.account === actor.account))) {
          const id = ctx[target.name].orgId;
          const res = await ctx[actor.name].caller.get(`/v1/events?tenant_id=${id}`);
          report.check(
            `${actor.name} → tenant_id=${target.name}`,
            wrongError(res, 400, 'invalid_request') ?? differsFromUnknown(res, id, unknown, UNKNOWN_TENANT),
          );
        }
      }
      for (const target of TENANT_CONTEXTS) {
        report.check(
          `O → tenant_id=${target.name}`,
          wrongError(await ctx.O.caller.get(`/v1/events?tenant_id=${ctx[target.name].orgId}`), 403, 'not_a_reseller'),
        );
      }
      report.check('O include_tenants=true', wrongError(await ctx.O.caller.get('/v1/events?include_tenants=true'), 403, 'not_a_reseller'));
      for (const spec of TENANT_CONTEXTS) {
        report.check(
          `${spec.label} include_tenants=true`,
          wrongError(await ctx[spec.name].caller.get('/v1/events?include_tenants=true'), 400, 'invalid_request'),
        );
      }
      report.assert(RESELLER_CONTEXTS.length * (1 + CONTEXTS.length - 2) + TENANT_CONTEXTS.length * 2 + 1);
    });

    it('GET /v1/tenant-usage lists exactly each reseller’s own two tenants, as JSON and as CSV', async () => {
      const report = new Report();
      for (const spec of RESELLER_CONTEXTS) {
        const own = TENANT_CONTEXTS.filter((t) => t.account === spec.account).map((t) => ctx[t.name].orgId);
        const { items } = await walkList(ctx[spec.name].caller, '/v1/tenant-usage', 1);
        report.check(
          `${spec.label} JSON`,
          wrongList(
            items.map((i) => i.tenant_id),
            sorted(own),
          ),
        );
        const res = await request(await app())
          .get('/v1/tenant-usage')
          .set({ Authorization: `Bearer ${accounts[spec.account].keys[0].key}`, Accept: 'text/csv' })
          .buffer(true)
          .parse((response, done) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => done(null, text));
          });
        const ids = String(res.body)
          .split('\r\n')
          .slice(1, -1)
          .map((line) => line.split(',')[0]);
        report.check(`${spec.label} CSV`, res.status === 200 ? wrongList(ids, sorted(own)) : `${res.status} ${res.text}`);
      }
      report.assert(RESELLER_CONTEXTS.length * 2);
    });

    it('GET /v1/tenants lists exactly each reseller’s own two tenants', async () => {
      const report = new Report();
      for (const spec of RESELLER_CONTEXTS) {
        const { items } = await walkList(ctx[spec.name].caller, '/v1/tenants', 100);
        const own = TENANT_CONTEXTS.filter((t) => t.account === spec.account).map((t) => ctx[t.name].orgId);
        report.check(spec.label, wrongList(sorted(items.map((i) => i.id)), sorted(own)));
      }
      report.assert(RESELLER_CONTEXTS.length);
    });

    it('every tenant, its limits and prices, its organization name and every sending number are as before', async () => {
      const report = new Report();
      for (const spec of TENANT_CONTEXTS) {
        const owner = ctx[spec.account].caller;
        for (const [part, path] of [
          ['tenant', ''],
          ['limits', '/limits'],
          ['prices', '/prices'],
        ] as const) {
          const res = await owner.get(`/v1/tenants/${ctx[spec.name].orgId}${path}`);
          report.check(
            `${spec.name} ${part}`,
            res.status === 200 && JSON.stringify(res.body) === JSON.stringify(tenantSnapshots[spec.name][part]) ? null : `${res.status} ${res.text}`,
          );
        }
      }
      for (const spec of CONTEXTS) {
        const c = ctx[spec.name];
        const organization = await c.caller.get('/v1/organization');
        report.check(
          `${spec.label} organization`,
          organization.status === 200 && organization.body.id === c.orgId && organization.body.name === c.organizationName
            ? null
            : `${organization.status} ${organization.text}`,
        );
        const sender = await c.caller.get('/v1/sms-sender');
        report.check(
          `${spec.label} sms-sender`,
          sender.status === 200 && sender.body.phone_number === c.created['phone-numbers'].phone_number ? null : `${sender.status} ${sender.text}`,
        );
      }
      report.assert(TENANT_CONTEXTS.length * 3 + CONTEXTS.length * 2);
    });
  });

  describe('controls: the owner’s own writes succeed where the others’ got 404', () => {
    for (const family of OWNED.filter((f) => f.ownUpdate)) {
      it(`PATCH ${family.path}/{id}: every context changes its own ${family.resource}, 200`, async () => {
        const report = new Report();
        for (const spec of CONTEXTS) {
          const c = ctx[spec.name];
          const changes = family.ownUpdate!(c);
          const res = await c.caller.patch(`${family.path}/${c.created[family.name].id}`, changes);
          const applied = res.status === 200 && Object.entries(changes).every(([field, value]) => JSON.stringify(res.body[field]) === JSON.stringify(value));
          report.check(spec.label, applied ? null : `${res.status} ${res.text}`);
        }
        report.assert(CONTEXTS.length);
      });
    }

    for (const family of OWNED.filter((f) => f.deletable)) {
      it(`DELETE ${family.path}/{id}: every context deletes its own (fresh) ${family.resource}, 204, then 404`, async () => {
        const report = new Report();
        for (const spec of CONTEXTS) {
          const c = ctx[spec.name];
          const fresh = await made(c.caller, family.path, family.create!(c), `${spec.label}: POST ${family.path}`);
          const res = await c.caller.delete(`${family.path}/${fresh.id}`);
          // Gone: read it (or, without a read of one, delete it again) and get its 404.
          const again = family.readOne ? c.caller.get(`${family.path}/${fresh.id}`) : c.caller.delete(`${family.path}/${fresh.id}`);
          report.check(spec.label, res.status === 204 ? wrongError(await again, 404, `${family.resource}_not_found`) : `${res.status} ${res.text}`);
        }
        report.assert(CONTEXTS.length);
      });
    }

    it('each account revokes its own second API key: 204, and that key is refused from then on (401)', async () => {
      const report = new Report();
      for (const spec of ACCOUNT_CONTEXTS) {
        const { keyId } = accounts[spec.account].keys[1];
        const res = await ctx[spec.name].caller.delete(`/v1/api-keys/${keyId}`);
        report.check(
          `${spec.name} revokes ${keyId}`,
          res.status === 204 ? wrongError(await keyCaller(spec.account, 1).get('/v1/organization'), 401, 'unauthorized') : `${res.status} ${res.text}`,
        );
      }
      report.assert(ACCOUNT_CONTEXTS.length);
    });
  });
});
