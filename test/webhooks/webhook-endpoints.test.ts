import { expect } from 'chai';
import { CALL_EVENT_FIELDS } from '../../src/calls/call-event.entity.js';
import { EVENT_TYPES } from '../../src/events/event-types.js';
import { db } from '../helpers/db.js';
import { customizationProblem } from '../../src/webhooks/payload.js';
import { asCaller, createOrg, expectError, expectStatus, keyWith, walkList, type Caller, type TestOrg } from '../helpers/api.js';
import { expectInvalid, ISO_UTC, newestFirst } from '../helpers/org-resource.js';
import { createTenant, reseller } from '../helpers/tenants.js';

const PATH = '/v1/webhook-endpoints';
const FIELDS = [
  'id',
  'name',
  'url',
  'has_secret',
  'outcomes',
  'event_types',
  'field_aliases',
  'extra_payload',
  'custom_headers',
  'disabled',
  'rate_limit_per_second',
  'tenant_events',
  'tenant_ids',
  'secret_rotation',
  'created_at',
];
const OUTCOMES = ['positive', 'neutral', 'negative', 'voicemail', 'unreachable'];

let serial = 0;
/** A valid create body with a secret no other endpoint of this run has. */
const endpointBody = (fields: Record<string, unknown> = {}) => {
  const n = serial++;
  return { name: `Hook ${n}`, url: `https://hooks.example.com/ringlane/${n}`, secret: `s3cret-${process.pid}-${n}-${Date.now()}`, outcomes: [], ...fields };
};

const storedSecret = async (id: string): Promise<string | undefined> => (await db.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [id]))[0]?.secret;

/** A map of `n` entries whose keys are valid header names and `extra_payload` keys. */
const entries = (n: number, value: (i: number) => unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-Field-${i}`, value(i)]));

describe('webhook endpoints (SPEC.md §2.5, §4.4; CONTRACT.md "Webhook endpoint")', () => {
  let org: TestOrg;
  let owner: Caller;
  before(async () => {
    org = await createOrg();
    owner = asCaller(org.key);
  });

  const create = async (fields: Record<string, unknown> = {}, caller = owner) => {
    const body = endpointBody(fields);
    return { body, endpoint: expectStatus(await caller.post(PATH, body), 201).body };
  };

  describe('CRUD', () => {
    it('POST answers 201 with the endpoint: has_secret true, never the secret', async () => {
      const body = endpointBody({
        outcomes: ['positive', 'voicemail'],
        field_aliases: { call_id: 'callId', sequence: 'seq' },
        extra_payload: { source: 'ringlane', nested: { list: [1, 'two', null, true], n: 1.5 }, nothing: null },
        custom_headers: { 'X-Api-Key': 'abc123', Authorization: 'Bearer t0ken' },
      });
      const res = expectStatus(await owner.post(PATH, body), 201);
      const endpoint = res.body;
      expect(endpoint).to.have.all.keys(...FIELDS);
      expect(endpoint.id).to.match(/^whe_[0-9A-Za-z]{22}$/);
      const { secret, ...shown } = body;
      expect(endpoint).to.deep.include({ ...shown, has_secret: true, disabled: false });
      expect(endpoint.created_at).to.match(ISO_UTC);
      expect(res.text).to.not.include(secret);
      expect(await storedSecret(endpoint.id)).to.equal(secret);
    });

    it('defaults the maps to {} and keeps an empty outcomes list (every outcome) and event_types (every call event); no tenant events', async () => {
      const { endpoint } = await create();
      expect(endpoint).to.deep.include({
        outcomes: [],
        event_types: [],
        tenant_events: 'none',
        tenant_ids: [],
        field_aliases: {},
        extra_payload: {},
        custom_headers: {},
        has_secret: true,
        disabled: false,
      });
    });

    it('accepts every event type in event_types, shows them as given, and PATCH replaces them', async () => {
      const { endpoint } = await create({ event_types: [...EVENT_TYPES].reverse() });
      expect(endpoint.event_types).to.deep.equal([...EVENT_TYPES].reverse());
      const one = `${PATH}/${endpoint.id}`;
      expect(expectStatus(await owner.patch(one, { event_types: ['tenant.disabled'] }), 200).body.event_types).to.deep.equal(['tenant.disabled']);
      expect(expectStatus(await owner.get(one), 200).body.event_types).to.deep.equal(['tenant.disabled']);
      expect(expectStatus(await owner.patch(one, { event_types: [] }), 200).body.event_types).to.deep.equal([]);
    });

    it('rate_limit_per_second: null (no limit) unless given; 1 to 1000 on create and PATCH, null removes it', async () => {
      expect((await create()).endpoint).to.deep.include({ rate_limit_per_second: null, secret_rotation: null });
      const { endpoint } = await create({ rate_limit_per_second: 5 });
      expect(endpoint.rate_limit_per_second).to.equal(5);
      const one = `${PATH}/${endpoint.id}`;
      expect(expectStatus(await owner.patch(one, { rate_limit_per_second: 1000 }), 200).body).to.deep.equal({ ...endpoint, rate_limit_per_second: 1000 });
      expect(expectStatus(await owner.patch(one, { rate_limit_per_second: 1 }), 200).body.rate_limit_per_second).to.equal(1);
      expect(expectStatus(await owner.patch(one, { rate_limit_per_second: null }), 200).body).to.deep.equal({ ...endpoint, rate_limit_per_second: null });
      expect(expectStatus(await owner.get(one), 200).body.rate_limit_per_second).to.equal(null);
    });

    it('accepts every outcome value', async () => {
      const { endpoint } = await create({ outcomes: OUTCOMES });
      expect(endpoint.outcomes).to.deep.equal(OUTCOMES);
    });

    it('GET reads it back; no read or list shows any secret', async () => {
      const fresh = await createOrg();
      const caller = asCaller(fresh.key);
      const made = [await create({}, caller), await create({ outcomes: ['negative'] }, caller), await create({ extra_payload: { a: 1 } }, caller)];
      for (const { endpoint, body } of made) {
        const read = expectStatus(await caller.get(`${PATH}/${endpoint.id}`), 200);
        expect(read.body).to.deep.equal(endpoint);
        expect(read.text).to.not.include(body.secret);
      }
      const { pages, items } = await walkList(caller, PATH, 2);
      expect(pages.map((p) => p.data.length)).to.deep.equal([2, 1]);
      expect(items).to.deep.equal(newestFirst(made.map((m) => m.endpoint)));
      const everything = JSON.stringify(pages) + JSON.stringify(expectStatus(await caller.get(PATH), 200).body);
      for (const { body } of made) expect(everything).to.not.include(body.secret);
      for (const item of items) {
        expect(item).to.have.all.keys(...FIELDS);
        expect(item.has_secret).to.equal(true);
      }
    });

    it('PATCH changes the given fields, keeps the others, and replaces maps whole', async () => {
      const { endpoint } = await create({ outcomes: ['positive'], custom_headers: { 'X-One': '1', 'X-Two': '2' } });
      const changes = {
        name: 'Renamed',
        url: 'http://hooks.example.net:8080/v2?token=abc',
        outcomes: ['negative', 'unreachable'],
        field_aliases: { outcome: 'result' },
        extra_payload: { tier: 'gold' },
        custom_headers: { 'X-Three': '3' },
      };
      const res = expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, changes), 200);
      expect(res.body).to.deep.equal({ ...endpoint, ...changes });
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body).to.deep.equal(res.body);
      const renamed = expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { name: 'Only the name' }), 200).body;
      expect(renamed).to.deep.equal({ ...res.body, name: 'Only the name' });
    });

    it('PATCH with a new secret rotates it, and answers without it', async () => {
      const { endpoint, body } = await create();
      const rotated = `rotated-${body.secret}`;
      const res = expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { secret: rotated }), 200);
      expect(res.body).to.deep.equal(endpoint);
      expect(res.text).to.not.include(rotated);
      expect(await storedSecret(endpoint.id)).to.equal(rotated);
      const whsec = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
      expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { secret: whsec }), 200);
      expect(await storedSecret(endpoint.id)).to.equal(whsec);
    });

    it('PATCH disabled: false re-enables an endpoint switched off for failing, and ends its failure streak', async () => {
      const { endpoint } = await create();
      await db.query("UPDATE webhook_endpoints SET disabled = true, failing_since = now() - interval '121 hours' WHERE id = $1", [endpoint.id]);
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body.disabled).to.equal(true);
      // Another change leaves the endpoint off and its streak running.
      expect(expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { name: 'Still off' }), 200).body.disabled).to.equal(true);
      const [before] = await db.query('SELECT failing_since FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      expect(before.failing_since).to.be.instanceOf(Date);

      const res = expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { disabled: false }), 200);
      expect(res.body).to.deep.equal({ ...endpoint, name: 'Still off', disabled: false });
      const [after] = await db.query('SELECT disabled, failing_since FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      expect(after).to.deep.equal({ disabled: false, failing_since: null });
    });

    it('PATCH disabled: false on an endpoint that is not disabled keeps its failure streak', async () => {
      const { endpoint } = await create();
      await db.query("UPDATE webhook_endpoints SET failing_since = now() - interval '2 hours' WHERE id = $1", [endpoint.id]);
      const [before] = await db.query('SELECT failing_since FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      expect(expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { disabled: false }), 200).body).to.deep.equal(endpoint);
      const [after] = await db.query('SELECT disabled, failing_since FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      expect(after).to.deep.equal({ disabled: false, failing_since: before.failing_since });
    });

    it('PATCH disabled: true switches an endpoint off by hand', async () => {
      const { endpoint } = await create();
      expect(expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, { disabled: true }), 200).body.disabled).to.equal(true);
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body.disabled).to.equal(true);
    });

    it('DELETE answers 204; the endpoint is gone from reads and lists', async () => {
      const { endpoint } = await create();
      const res = expectStatus(await owner.delete(`${PATH}/${endpoint.id}`), 204);
      expect(res.text).to.equal('');
      expectError(await owner.get(`${PATH}/${endpoint.id}`), 404, 'webhook_endpoint_not_found');
      expectError(await owner.delete(`${PATH}/${endpoint.id}`), 404, 'webhook_endpoint_not_found');
      expect((await walkList(owner, PATH, 100)).items.map((e) => e.id)).to.not.include(endpoint.id);
      expect(await storedSecret(endpoint.id)).to.equal(undefined);
    });

    it('accepts the reserved headers in custom_headers and keeps them as given (they lose at send time)', async () => {
      const reserved = {
        'X-Ringlane-Delivery-Id': 'mine',
        'x-ringlane-signature': 'sha256=forged',
        'Content-Type': 'text/plain',
        'User-Agent': 'mine/1.0',
        'webhook-id': 'a',
        'Webhook-Timestamp': '1',
        'WEBHOOK-SIGNATURE': 'v1,forged',
      };
      const { endpoint } = await create({ custom_headers: reserved });
      expect(endpoint.custom_headers).to.deep.equal(reserved);
    });

    it('replays an idempotent POST without the secret', async () => {
      const body = endpointBody();
      const key = `whe-${body.secret}`;
      const first = await asCaller(org.key, { 'Idempotency-Key': key }).post(PATH, body);
      const again = await asCaller(org.key, { 'Idempotency-Key': key }).post(PATH, body);
      expectStatus(again, 201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(again.text).to.not.include(body.secret);
      const count = await db.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = $1 AND name = $2', [org.id, body.name]);
      expect(count[0].n).to.equal(1);
    });
  });

  describe('refuses bad input with 400 naming the field', () => {
    const long = (n: number) => `https://example.com/${'a'.repeat(n - 'https://example.com/'.length)}`;
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['a missing name', { name: undefined }, 'name'],
      ['an empty name', { name: '   ' }, 'name'],
      ['a missing url', { url: undefined }, 'url'],
      ['a url that is not http(s)', { url: 'ftp://example.com/hook' }, 'url'],
      ['a relative url', { url: '/hooks' }, 'url'],
      ['a url without a scheme', { url: 'example.com/hooks' }, 'url'],
      ['a javascript: url', { url: 'javascript:alert(1)' }, 'url'],
      ['a url with credentials', { url: 'https://user:pass@example.com/hook' }, 'url'],
      ['a url with a user name', { url: 'https://user@example.com/hook' }, 'url'],
      ['a url with whitespace', { url: 'https://example.com/a b' }, 'url'],
      ['a url over 2048 characters', { url: long(2049) }, 'url'],
      ['a url that is not a string', { url: 42 }, 'url'],
      ['a missing secret', { secret: undefined }, 'secret'],
      ['a secret of 7 characters', { secret: '1234567' }, 'secret'],
      ['a secret of 513 characters', { secret: 'x'.repeat(513) }, 'secret'],
      ['a secret of spaces', { secret: ' '.repeat(12) }, 'secret'],
      ['a secret of whitespace only', { secret: ' \t\r\n\u00a0\u2003   ' }, 'secret'],
      ['a whsec_ secret that is not base64', { secret: 'whsec_this is not base64!' }, 'secret'],
      ['a whsec_ secret with broken padding', { secret: 'whsec_QUJD=' }, 'secret'],
      ['missing outcomes', { outcomes: undefined }, 'outcomes'],
      ['outcomes that are not an array', { outcomes: 'positive' }, 'outcomes'],
      ['an unknown outcome', { outcomes: ['positive', 'great'] }, 'outcomes.1'],
      ['a repeated outcome', { outcomes: ['positive', 'positive'] }, 'outcomes.1'],
      ['field_aliases that is not an object', { field_aliases: ['a'] }, 'field_aliases'],
      ['an empty alias', { field_aliases: { call_id: '' } }, 'field_aliases.call_id'],
      ['an alias that is not a string', { field_aliases: { call_id: 5 } }, 'field_aliases.call_id'],
      ['two fields renamed to one name', { field_aliases: { call_id: 'id', event: 'id' } }, 'field_aliases.event'],
      ['more than 20 aliases', { field_aliases: entries(21, (i) => `alias_${i}`) }, 'field_aliases'],
      ['extra_payload that is not an object', { extra_payload: 'x' }, 'extra_payload'],
      ['more than 20 extra_payload entries', { extra_payload: entries(21, (i) => i) }, 'extra_payload'],
      // Postgres stores no U+0000: refused at the edge for every route (src/http/input-guard.ts).
      ['NUL in a static value', { extra_payload: { a: 'nul\u0000' } }, 'extra_payload.a'],
      ['NUL in the name', { name: 'a\u0000b' }, 'name'],
      ['NUL in the secret', { secret: 'a long\u0000secret' }, 'secret'],
      ['custom_headers that is not an object', { custom_headers: ['X-A'] }, 'custom_headers'],
      ['more than 20 custom headers', { custom_headers: entries(21, String) }, 'custom_headers'],
      ['a header name with a space', { custom_headers: { 'X Api Key': 'k' } }, 'custom_headers.X Api Key'],
      ['a header name with a colon', { custom_headers: { 'X-Api-Key:': 'k' } }, 'custom_headers.X-Api-Key:'],
      ['a header name with a non-ASCII letter', { custom_headers: { 'X-Clé': 'k' } }, 'custom_headers.X-Clé'],
      ['an empty header name', { custom_headers: { '': 'k' } }, 'custom_headers.'],
      ['Host', { custom_headers: { Host: 'evil.example' } }, 'custom_headers.Host'],
      ['host in lower case', { custom_headers: { host: 'evil.example' } }, 'custom_headers.host'],
      ['Content-Length', { custom_headers: { 'Content-Length': '0' } }, 'custom_headers.Content-Length'],
      ['Transfer-Encoding', { custom_headers: { 'TRANSFER-ENCODING': 'chunked' } }, 'custom_headers.TRANSFER-ENCODING'],
      ['Connection', { custom_headers: { connection: 'close' } }, 'custom_headers.connection'],
      ['one header in two spellings', { custom_headers: { 'X-A': '1', 'x-a': '2' } }, 'custom_headers.x-a'],
      ['a header value with CR LF', { custom_headers: { 'X-A': 'ok\r\nX-Injected: yes' } }, 'custom_headers.X-A'],
      ['a header value with LF', { custom_headers: { 'X-A': 'ok\nmore' } }, 'custom_headers.X-A'],
      ['a header value over 1024 characters', { custom_headers: { 'X-A': 'v'.repeat(1025) } }, 'custom_headers.X-A'],
      ['a header value that is not a string', { custom_headers: { 'X-A': 1 } }, 'custom_headers.X-A'],
      ['an unknown event type', { event_types: ['call.completed', 'call.done'] }, 'event_types.1'],
      ['an event type given twice', { event_types: ['balance.low', 'balance.low'] }, 'event_types.1'],
      ['event_types that is not a list', { event_types: 'call.completed' }, 'event_types'],
      ['a rate limit of 0', { rate_limit_per_second: 0 }, 'rate_limit_per_second'],
      ['a rate limit over 1000', { rate_limit_per_second: 1001 }, 'rate_limit_per_second'],
      ['a rate limit that is not an integer', { rate_limit_per_second: 2.5 }, 'rate_limit_per_second'],
      ['a rate limit given as a string', { rate_limit_per_second: '5' }, 'rate_limit_per_second'],
      ['secret_rotation', { secret_rotation: null }, 'secret_rotation'],
      ['an unknown field', { retries: 3 }, 'retries'],
      ['disabled on create', { disabled: true }, 'disabled'],
      ['has_secret', { has_secret: true }, 'has_secret'],
    ];
    for (const [what, fields, path] of cases) {
      it(`on create: ${what}`, async () => {
        const body = endpointBody(fields);
        for (const [key, value] of Object.entries(body)) if (value === undefined) delete (body as Record<string, unknown>)[key];
        expectInvalid(await owner.post(PATH, body), path);
      });
    }

    it('on update, with the same rules', async () => {
      const { endpoint } = await create();
      const one = `${PATH}/${endpoint.id}`;
      expectInvalid(await owner.patch(one, { url: 'mailto:a@example.com' }), 'url');
      expectInvalid(await owner.patch(one, { url: 'https://a:b@example.com' }), 'url');
      expectInvalid(await owner.patch(one, { secret: 'short' }), 'secret');
      expectInvalid(await owner.patch(one, { secret: ' '.repeat(12) }), 'secret');
      expectInvalid(await owner.patch(one, { outcomes: ['maybe'] }), 'outcomes.0');
      expectInvalid(await owner.patch(one, { event_types: ['tenant.deleted'] }), 'event_types.0');
      expectInvalid(await owner.patch(one, { custom_headers: { 'Content-Length': '1' } }), 'custom_headers.Content-Length');
      expectInvalid(await owner.patch(one, { extra_payload: entries(21, (i) => i) }), 'extra_payload');
      expectInvalid(await owner.patch(one, { disabled: 'no' }), 'disabled');
      expectInvalid(await owner.patch(one, { rate_limit_per_second: -1 }), 'rate_limit_per_second');
      expectInvalid(await owner.patch(one, { rate_limit_per_second: 1001 }), 'rate_limit_per_second');
      expectInvalid(await owner.patch(one, { name: null }), 'name');
      expectInvalid(await owner.patch(one, { failing_since: null }), 'failing_since');
      expectInvalid(await owner.patch(one, { id: 'whe_mine' }), 'id');
      expectError(await owner.patch(one, {}), 400, 'invalid_request');
      expect(expectStatus(await owner.get(one), 200).body).to.deep.equal(endpoint);
    });

    it('recover refuses a since no delivery can have (before year 1, such as -004714-11-24T00:00:00Z) at the request', async () => {
      const { endpoint } = await create();
      for (const since of ['-004714-11-24T00:00:00Z', '-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '0000-12-31T00:00:00Z']) {
        expectInvalid(await owner.post(`${PATH}/${endpoint.id}/recover`, { since }), 'since');
      }
      expectStatus(await owner.post(`${PATH}/${endpoint.id}/recover`, { since: '0001-01-01T00:00:00Z' }), 202);
    });

    it('recover takes since only as a real ISO 8601 UTC time ending in Z (YYYY-MM-DDTHH:MM:SS(.fraction)Z)', async () => {
      const { endpoint } = await create();
      for (const since of [
        '2026-01-01',
        '2026-01-01T00:00:00+05:00',
        '2026-01-01T00:00Z',
        '2026-02-30T00:00:00Z',
        '2026-01-01T00:00:00',
        '2026-01-01t00:00:00z',
      ]) {
        expectInvalid(await owner.post(`${PATH}/${endpoint.id}/recover`, { since }), 'since');
      }
      const accepted = expectStatus(await owner.post(`${PATH}/${endpoint.id}/recover`, { since: '2026-01-01T00:00:00.5Z' }), 202).body;
      expect(accepted).to.deep.equal({ endpoint_id: endpoint.id, since: '2026-01-01T00:00:00.500Z', status: 'accepted' });
    });

    it('names the problem in the message', async () => {
      const error = expectInvalid(await owner.post(PATH, endpointBody({ custom_headers: { Host: 'x' } })), 'custom_headers.Host');
      expect(error.message).to.include('Host');
      expect(expectInvalid(await owner.post(PATH, endpointBody({ url: 'ftp://x' })), 'url').message).to.match(/http/);
    });

    it('refuses a bad limit or cursor, and unknown list parameters', async () => {
      expectInvalid(await owner.get(`${PATH}?limit=0`), 'limit');
      expectInvalid(await owner.get(`${PATH}?limit=101`), 'limit');
      expectInvalid(await owner.get(`${PATH}?cursor=nonsense`), 'cursor');
      expectInvalid(await owner.get(`${PATH}?outcome=positive`), 'outcome');
    });
  });

  describe('limits of 20 entries (SPEC.md §8)', () => {
    it('accepts exactly 20 entries in each map (every event field in field_aliases), on create and on update', async () => {
      const twenty = {
        // field_aliases can only have one entry per event field, fewer than 20.
        field_aliases: Object.fromEntries(CALL_EVENT_FIELDS.map((field) => [field, `${field}_renamed`])),
        extra_payload: entries(20, (i) => ({ i })),
        custom_headers: entries(20, (i) => `value ${i}`),
      };
      const { endpoint } = await create(twenty);
      expect(endpoint).to.deep.include(twenty);
      expectStatus(await owner.patch(`${PATH}/${endpoint.id}`, twenty), 200);
    });

    it('refuses 21 entries in any map', async () => {
      expectInvalid(await owner.post(PATH, endpointBody({ field_aliases: entries(21, (i) => `alias_${i}`) })), 'field_aliases');
      expectInvalid(await owner.post(PATH, endpointBody({ extra_payload: entries(21, (i) => i) })), 'extra_payload');
      expectInvalid(await owner.post(PATH, endpointBody({ custom_headers: entries(21, String) })), 'custom_headers');
    });
  });

  describe('field_aliases and extra_payload: the body delivered is exactly the one configured', () => {
    /** How many endpoints of the organization are called `name`. */
    const stored = async (name: string) =>
      (await db.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = $1 AND name = $2', [org.id, name]))[0].n;
    /** Bodies as express parses them: "__proto__" an own key, as sent. */
    const parsed = (json: string) => JSON.parse(json) as Record<string, unknown>;

    const refused: Array<[string, Record<string, unknown>, string]> = [
      ['an alias of a name that is not an event field', { field_aliases: { callid: 'id' } }, 'field_aliases.callid'],
      ['an alias of __proto__', { field_aliases: parsed('{"__proto__": "id"}') }, 'field_aliases.__proto__'],
      ['an alias of constructor', { field_aliases: { constructor: 'id' } }, 'field_aliases.constructor'],
      ['a field renamed onto another field', { field_aliases: { call_id: 'event' } }, 'field_aliases.call_id'],
      ['a field renamed onto another field, whatever the order', { field_aliases: { event: 'kind', status: 'call_id' } }, 'field_aliases.status'],
      ['two fields renamed to one name', { field_aliases: { call_id: 'id', event: 'id' } }, 'field_aliases.event'],
      ['a field renamed to __proto__', { field_aliases: { call_id: '__proto__' } }, 'field_aliases.call_id'],
      ['a field renamed to constructor', { field_aliases: { call_id: 'constructor' } }, 'field_aliases.call_id'],
      ['a field renamed to prototype', { field_aliases: { status: 'prototype' } }, 'field_aliases.status'],
      ['an empty alias', { field_aliases: { call_id: '' } }, 'field_aliases.call_id'],
      ['an alias that is not a string', { field_aliases: { call_id: 5 } }, 'field_aliases.call_id'],
      ['a static __proto__ key', { extra_payload: parsed('{"__proto__": {"polluted": true}}') }, 'extra_payload.__proto__'],
      ['a static key named like a field', { extra_payload: { source: 'crm', status: 'x' } }, 'extra_payload.status'],
      ['a static key named like an alias', { field_aliases: { call_id: 'id' }, extra_payload: { id: 1 } }, 'extra_payload.id'],
      [
        'a static key named like a swapped field',
        { field_aliases: { call_id: 'event', event: 'call_id' }, extra_payload: { event: 1 } },
        'extra_payload.event',
      ],
      // The maps apply to operational events too: their fields are names of the body as well.
      ['a static key named like a field of an operational event', { extra_payload: { tenant_id: 'x' } }, 'extra_payload.tenant_id'],
      ['a field renamed onto a field of an operational event', { field_aliases: { call_id: 'reason' } }, 'field_aliases.call_id'],
    ];
    for (const [what, fields, path] of refused) {
      it(`refuses on create ${what}, and stores nothing`, async () => {
        const body = endpointBody(fields);
        expectInvalid(await owner.post(PATH, body), path);
        expect(await stored(body.name)).to.equal(0);
      });
    }

    it('names the event fields when an alias renames something else', async () => {
      const error = expectInvalid(await owner.post(PATH, endpointBody({ field_aliases: { callid: 'id' } })), 'field_aliases.callid');
      for (const field of CALL_EVENT_FIELDS) expect(error.details[0].message).to.include(field);
    });

    it('accepts a swap, an alias onto a field renamed away, and static keys named like Object.prototype members, and shows them as stored', async () => {
      const custom = {
        field_aliases: { call_id: 'event', event: 'call_id', status: 'state', outcome: 'status' },
        extra_payload: { constructor: 1, toString: 'x', valueOf: true, hasOwnProperty: null, outcome: 'static' },
      };
      const { endpoint } = await create(custom);
      expect(endpoint).to.deep.include(custom);
      expect(expectStatus(await owner.get(`${PATH}/${endpoint.id}`), 200).body).to.deep.include(custom);
      const [row] = await db.query('SELECT field_aliases, extra_payload FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      expect(row).to.deep.equal(custom);
    });

    it('on update, checks the maps the endpoint will have: the changed ones with the stored others', async () => {
      const { endpoint } = await create({ field_aliases: { call_id: 'id' }, extra_payload: { source: 'crm' } });
      const one = `${PATH}/${endpoint.id}`;
      // Each collides only with what is stored; a collision with a static key names the key.
      expectInvalid(await owner.patch(one, { extra_payload: { id: 1 } }), 'extra_payload.id');
      expectInvalid(await owner.patch(one, { field_aliases: { event: 'source' } }), 'extra_payload.source');
      expectInvalid(await owner.patch(one, { name: 'Not stored either', extra_payload: { id: 1 } }), 'extra_payload.id');
      expectInvalid(await owner.patch(one, { field_aliases: { call_id: 'event' } }), 'field_aliases.call_id');
      expectInvalid(await owner.patch(one, { extra_payload: parsed('{"__proto__": 1}') }), 'extra_payload.__proto__');
      expect(expectStatus(await owner.get(one), 200).body).to.deep.equal(endpoint);

      // Replacing both maps at once is judged on the new pair only.
      const swapped = { field_aliases: { call_id: 'event', event: 'call_id' }, extra_payload: { id: 1, constructor: 'c' } };
      expect(expectStatus(await owner.patch(one, swapped), 200).body).to.deep.equal({ ...endpoint, ...swapped });
      expect(expectStatus(await owner.patch(one, { name: 'Renamed only' }), 200).body).to.deep.equal({ ...endpoint, ...swapped, name: 'Renamed only' });
      expectError(await owner.patch(`${PATH}/whe_${'0'.repeat(22)}`, { extra_payload: { id: 1 } }), 404, 'webhook_endpoint_not_found');
    });

    it('refuses one of two concurrent changes that collide only together', async () => {
      const { endpoint } = await create();
      const one = `${PATH}/${endpoint.id}`;
      // Hold the row while both requests arrive, so both wait on it, then let them run.
      const holder = db.createQueryRunner();
      await holder.connect();
      let answers: Awaited<ReturnType<Caller['patch']>>[];
      try {
        await holder.startTransaction();
        await holder.query('SELECT id FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpoint.id]);
        const both = Promise.all([owner.patch(one, { field_aliases: { call_id: 'id' } }), owner.patch(one, { extra_payload: { id: 1 } })]);
        await waitForLockWaiters(2);
        await holder.commitTransaction();
        answers = await both;
      } finally {
        await holder.release();
      }
      expect(answers.map((res) => res.status).sort()).to.deep.equal([200, 400]);
      const [row] = await db.query('SELECT field_aliases, extra_payload FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
      expect(customizationProblem(row.field_aliases, row.extra_payload)).to.equal(null);
    });

    /** Waits until `n` sessions of this database wait for a lock in a statement on webhook_endpoints. */
    async function waitForLockWaiters(n: number) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [{ waiting }] = await db.query(
          "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%webhook_endpoints%'",
        );
        if (waiting >= n) return;
        if (Date.now() > deadline) throw new Error(`only ${waiting} of ${n} sessions came to wait for the lock`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  });

  describe('access', () => {
    it('needs the webhooks capability to write; reading needs none', async () => {
      const { endpoint } = await create();
      const limited = asCaller(await keyWith(org, ['operate', 'settings', 'api_keys']));
      const writes = [
        await limited.post(PATH, endpointBody()),
        await limited.patch(`${PATH}/${endpoint.id}`, { name: 'Nope' }),
        await limited.delete(`${PATH}/${endpoint.id}`),
      ];
      for (const res of writes) expect(expectError(res, 403, 'missing_capability').required).to.equal('webhooks');
      const reader = asCaller(await keyWith(org, []));
      expect(expectStatus(await reader.get(`${PATH}/${endpoint.id}`), 200).body).to.deep.equal(endpoint);
      expectStatus(await reader.get(PATH), 200);
      const writer = asCaller(await keyWith(org, ['webhooks']));
      expectStatus(await writer.post(PATH, endpointBody()), 201);
      expectStatus(await writer.patch(`${PATH}/${endpoint.id}`, { name: 'Allowed' }), 200);
    });

    it('answers 401 without a key', async () => {
      expectError(await asCaller('rk_live_nonsense').get(PATH), 401, 'unauthorized');
    });

    it('answers 404 webhook_endpoint_not_found for an id that does not exist', async () => {
      const id = `whe_${'0'.repeat(22)}`;
      expectError(await owner.get(`${PATH}/${id}`), 404, 'webhook_endpoint_not_found');
      expectError(await owner.patch(`${PATH}/${id}`, { name: 'x' }), 404, 'webhook_endpoint_not_found');
      expectError(await owner.delete(`${PATH}/${id}`), 404, 'webhook_endpoint_not_found');
    });

    it("answers 404 for another organization's endpoint, lists only its own, and leaves the other alone", async () => {
      const other = asCaller((await createOrg()).key);
      const theirs = (await create({}, other)).endpoint;
      const mine = (await create()).endpoint;
      for (const res of [
        await owner.get(`${PATH}/${theirs.id}`),
        await owner.patch(`${PATH}/${theirs.id}`, { name: 'Hijacked', disabled: false }),
        await owner.delete(`${PATH}/${theirs.id}`),
      ]) {
        expectError(res, 404, 'webhook_endpoint_not_found');
      }
      const ids = (await walkList(owner, PATH, 100)).items.map((e) => e.id);
      expect(ids).to.include(mine.id).and.not.include(theirs.id);
      expect((await walkList(other, PATH, 100)).items.map((e) => e.id)).to.deep.equal([theirs.id]);
      expect(expectStatus(await other.get(`${PATH}/${theirs.id}`), 200).body).to.deep.equal(theirs);
    });
  });

  describe('inside a tenant (X-Tenant-Id)', () => {
    it("manages the tenant's own endpoints, invisible from the reseller's own context and the other way round", async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      const tenants = (await create({ outcomes: ['positive'] }, inside)).endpoint;
      const resellers = (await create({}, owner.as)).endpoint;

      expect((await walkList(inside, PATH, 100)).items.map((e) => e.id)).to.deep.equal([tenants.id]);
      expect((await walkList(owner.as, PATH, 100)).items.map((e) => e.id)).to.deep.equal([resellers.id]);
      expectError(await owner.as.get(`${PATH}/${tenants.id}`), 404, 'webhook_endpoint_not_found');
      expectError(await owner.as.patch(`${PATH}/${tenants.id}`, { name: 'x' }), 404, 'webhook_endpoint_not_found');
      expectError(await owner.as.delete(`${PATH}/${tenants.id}`), 404, 'webhook_endpoint_not_found');
      expectError(await inside.get(`${PATH}/${resellers.id}`), 404, 'webhook_endpoint_not_found');
      const [row] = await db.query('SELECT org_id FROM webhook_endpoints WHERE id = $1', [tenants.id]);
      expect(row.org_id).to.equal(tenant.id);

      const renamed = expectStatus(await inside.patch(`${PATH}/${tenants.id}`, { name: 'Tenant CRM' }), 200).body;
      expect(renamed.name).to.equal('Tenant CRM');
      expectStatus(await inside.delete(`${PATH}/${tenants.id}`), 204);
      expect((await walkList(inside, PATH, 100)).items).to.deep.equal([]);
    });

    it('refuses changes while the tenant is disabled, and still reads', async () => {
      const owner = await reseller();
      const tenant = await createTenant(owner);
      const inside = owner.inside(tenant.id);
      const { endpoint } = await create({}, inside);
      expectStatus(await owner.as.patch(`/v1/tenants/${tenant.id}`, { disabled: true }), 200);
      expectError(await inside.post(PATH, endpointBody()), 403, 'tenant_disabled');
      expectError(await inside.patch(`${PATH}/${endpoint.id}`, { name: 'x' }), 403, 'tenant_disabled');
      expectError(await inside.delete(`${PATH}/${endpoint.id}`), 403, 'tenant_disabled');
      expect(expectStatus(await inside.get(`${PATH}/${endpoint.id}`), 200).body).to.deep.equal(endpoint);
    });

    it("answers 404 tenant_not_found for a tenant that is not the caller's", async () => {
      const owner = await reseller();
      const stranger = await reseller();
      const theirs = await createTenant(stranger);
      expectError(await owner.inside(theirs.id).get(PATH), 404, 'tenant_not_found');
      expectError(await owner.inside(theirs.id).post(PATH, endpointBody()), 404, 'tenant_not_found');
    });
  });
});
