import { expect } from 'chai';
import fc from 'fast-check';
import { CALL_EVENT_FIELDS } from '../../src/calls/call-event.entity.js';
import { buildBody, customizationProblem, MAX_FIELD_NAME_LENGTH, RESERVED_ALIASES } from '../../src/webhooks/payload.js';

const FIELDS: readonly string[] = CALL_EVENT_FIELDS;
/** Built the way JSON.parse builds objects: every key, `__proto__` included, an own property. */
const map = (entries: Array<[string, unknown]>): Record<string, unknown> => Object.fromEntries(entries);
const pathOf = (aliases: Record<string, unknown>, extra: Record<string, unknown> = {}) => customizationProblem(aliases, extra)?.path.join('.') ?? null;

describe('webhook body (buildBody)', () => {
  const short = { event: 'call.completed', call_id: 'call_1', outcome: 'positive', sequence: 4 };

  it('renames with field_aliases, then adds extra_payload, serialized once', () => {
    const body = buildBody(short, { field_aliases: { call_id: 'callId', outcome: 'result' }, extra_payload: { source: 'ringlane', tags: ['a'] } });
    expect(JSON.parse(body)).to.deep.equal({ event: 'call.completed', callId: 'call_1', result: 'positive', sequence: 4, source: 'ringlane', tags: ['a'] });
  });

  it('delivers a swap of two fields under each other’s names', () => {
    const body = JSON.parse(buildBody(short, { field_aliases: { call_id: 'event', event: 'call_id' }, extra_payload: {} }));
    expect(body).to.deep.equal({ event: 'call_1', call_id: 'call.completed', outcome: 'positive', sequence: 4 });
  });

  it('delivers static keys named like members of Object.prototype', () => {
    const extra = { constructor: 1, toString: 'x', valueOf: true, hasOwnProperty: null, __defineGetter__: [1] };
    const body = JSON.parse(buildBody(short, { field_aliases: {}, extra_payload: extra }));
    expect(Object.keys(body)).to.have.members([...Object.keys(short), ...Object.keys(extra)]);
    expect(body).to.deep.include(extra);
  });

  it('writes even a __proto__ key as a key of the body, not as its prototype (the API refuses one)', () => {
    const body = buildBody(short, { field_aliases: {}, extra_payload: map([['__proto__', { polluted: true }]]) });
    expect(body).to.equal(`${JSON.stringify(short).slice(0, -1)},"__proto__":{"polluted":true}}`);
  });

  it('for rows stored before the rules: a static key never replaces a field of the event', () => {
    expect(JSON.parse(buildBody(short, { field_aliases: {}, extra_payload: { sequence: 99, extra: 1 } }))).to.deep.equal({ ...short, extra: 1 });
  });
});

describe('webhook customization rule (customizationProblem)', () => {
  it('accepts no customization, renames to fresh names, and a swap', () => {
    expect(pathOf({})).to.equal(null);
    expect(pathOf({ call_id: 'callId', sequence: 'seq' }, { source: 'crm' })).to.equal(null);
    expect(pathOf({ call_id: 'event', event: 'call_id' })).to.equal(null);
    expect(pathOf({ call_id: 'call_id' })).to.equal(null);
  });

  it('accepts an alias onto a field that is itself renamed away, whatever the order of the aliases', () => {
    expect(pathOf({ call_id: 'event', event: 'kind' })).to.equal(null);
    expect(pathOf({ event: 'kind', call_id: 'event' })).to.equal(null);
    expect(pathOf({ event: 'kind', call_id: 'event', status: 'call_id' })).to.equal(null);
  });

  it('refuses an alias of something that is not an event field, listing the fields', () => {
    const problem = customizationProblem({ callid: 'id' }, {});
    expect(problem?.path).to.deep.equal(['field_aliases', 'callid']);
    for (const field of FIELDS) expect(problem?.message).to.include(field);
    expect(pathOf(map([['__proto__', 'x']]))).to.equal('field_aliases.__proto__');
    expect(pathOf({ constructor: 'x' })).to.equal('field_aliases.constructor');
  });

  it('counts the fields of operational events as event fields: they may be renamed, not taken by another name', () => {
    expect(pathOf({ tenant_id: 'tenant', last_error: 'error' })).to.equal(null);
    expect(pathOf({ call_id: 'endpoint_id' })).to.equal('field_aliases.call_id');
    expect(pathOf({}, { balance: 1 })).to.equal('extra_payload.balance');
    expect(pathOf({ threshold: 'floor' }, { threshold: 1 })).to.equal(null);
    expect(pathOf({ threshold: 'limit' })).to.equal('field_aliases.threshold'); // `limit`: a field of tenant.spend_threshold
  });

  it('refuses an alias onto a field delivered under its own name, naming the alias', () => {
    expect(pathOf({ call_id: 'event' })).to.equal('field_aliases.call_id');
    expect(pathOf({ event: 'kind', status: 'call_id' })).to.equal('field_aliases.status');
    expect(customizationProblem({ call_id: 'event' }, {})?.message).to.include('"event"');
  });

  it('refuses two aliases onto one name, naming the second', () => {
    expect(pathOf({ call_id: 'id', event: 'id' })).to.equal('field_aliases.event');
    expect(pathOf({ event: 'id', call_id: 'id' })).to.equal('field_aliases.call_id');
    expect(pathOf({ call_id: 'event', event: 'status', status: 'event' })).to.equal('field_aliases.status');
  });

  it('refuses aliases that are not usable names', () => {
    for (const alias of [...RESERVED_ALIASES, '', 'a'.repeat(MAX_FIELD_NAME_LENGTH + 1), 'a\u0000b', 5, null, ['id'], { id: 1 }]) {
      expect(pathOf({ call_id: alias }), JSON.stringify(alias)).to.equal('field_aliases.call_id');
    }
    expect(pathOf({ call_id: 'a'.repeat(MAX_FIELD_NAME_LENGTH) })).to.equal(null);
  });

  it('refuses a __proto__ static key, and lets other Object.prototype names through', () => {
    expect(pathOf({}, map([['__proto__', {}]]))).to.equal('extra_payload.__proto__');
    expect(pathOf({}, { constructor: 1, toString: 'x', valueOf: true, prototype: 2, hasOwnProperty: 3 })).to.equal(null);
  });

  it('refuses a static key equal to a delivered name, and allows the name of a field renamed away', () => {
    expect(pathOf({}, { source: 'crm', status: 'x' })).to.equal('extra_payload.status');
    expect(pathOf({ call_id: 'id' }, { id: 1 })).to.equal('extra_payload.id');
    expect(pathOf({ call_id: 'event', event: 'call_id' }, { event: 1 })).to.equal('extra_payload.event');
    expect(pathOf({ call_id: 'id' }, { call_id: 'static' })).to.equal(null);
    expect(customizationProblem({ call_id: 'id' }, { id: 1 })?.message).to.include('"call_id"');
  });
});

describe('webhook customization properties (fast-check)', () => {
  const field = fc.constantFrom(...FIELDS);
  /** Keys that are fields, members of Object.prototype, each other, or anything. */
  const key = fc.oneof(
    fc.constantFrom(...FIELDS, 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', 'id', 'kind'),
    fc.string({ maxLength: 8 }),
  );
  /** Names the rule refuses as aliases, or as keys of field_aliases or extra_payload. */
  const refused = fc.constantFrom<unknown>('__proto__', 'constructor', 'prototype', '', 'a\u0000', 7, null, 'callid');
  /** Fields renamed onto each other's names (swaps, rotations): accepted, and easy to get wrong. */
  const permutation = fc
    .shuffledSubarray([...FIELDS])
    .chain((fields) => fc.shuffledSubarray(fields, { minLength: fields.length }).map((names) => fields.map((f, i): [string, unknown] => [f, names[i]])));
  /** JSON values as they come back from the jsonb column (JSON.parse turns -0 into 0). */
  const json = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
  const entries = <V>(k: fc.Arbitrary<string>, v: fc.Arbitrary<V>, maxLength: number) =>
    fc.uniqueArray(fc.tuple(k, v), { selector: ([name]) => name, maxLength });

  /** Any maps, refused ones included: renames onto taken names, bad aliases, keys that are not fields. */
  const anyAliases = fc
    .tuple(
      permutation,
      entries(fc.oneof({ arbitrary: field, weight: 9 }, { arbitrary: key, weight: 1 }), fc.oneof(field, key, refused), 20),
      entries(refused.map(String), key, 1),
    )
    .map(([moved, renamed, bad]) => map([...moved, ...renamed, ...bad]));
  const anyExtra = fc.tuple(entries(key, json, 20), entries(fc.constant('__proto__'), json, 1)).map(([extra, proto]) => map([...extra, ...proto]));
  /** Maps mostly accepted, so a filter on the rule leaves enough cases. */
  const likelyAliases = fc.tuple(permutation, entries(field, fc.oneof(field, key), 4)).map(([moved, renamed]) => map([...moved, ...renamed]));
  const likelyExtra = entries(key, json, 6).map(map);
  const eventArb = fc.record(Object.fromEntries(FIELDS.map((f) => [f, fc.oneof(fc.string(), fc.integer(), fc.constant(null))])));

  /** Where each field is delivered, by the rule's own words rather than the code's. */
  const delivered = (a: Record<string, unknown>) => FIELDS.map((f) => (Object.keys(a).includes(f) ? a[f] : f));

  it('accepts exactly the customizations whose delivered names are all unique, usable, and rename event fields', () => {
    fc.assert(
      fc.property(anyAliases, anyExtra, (a, e) => {
        const names = [...delivered(a), ...Object.keys(e)];
        const ok =
          Object.keys(a).every((f) => FIELDS.includes(f)) &&
          Object.values(a).every(
            (alias) =>
              typeof alias === 'string' &&
              alias.length > 0 &&
              alias.length <= MAX_FIELD_NAME_LENGTH &&
              !alias.includes('\u0000') &&
              !RESERVED_ALIASES.includes(alias),
          ) &&
          !Object.keys(e).includes('__proto__') &&
          new Set(names).size === names.length;
        const problem = customizationProblem(a, e);
        expect(problem === null, JSON.stringify(problem)).to.equal(ok);
        if (problem) expect(Object.keys(problem.path[0] === 'field_aliases' ? a : e)).to.include(problem.path[1]);
      }),
      { numRuns: 2000 },
    );
  });

  it('for any accepted customization, delivers every field under its name and every static key, and nothing else', () => {
    fc.assert(
      fc.property(eventArb, likelyAliases, likelyExtra, (ev, a, e) => {
        fc.pre(customizationProblem(a, e) === null);
        const expected = new Map<unknown, unknown>(FIELDS.map((f, i) => [delivered(a)[i], ev[f]]));
        for (const [name, value] of Object.entries(e)) expected.set(name, value);
        const body = JSON.parse(buildBody(ev, { field_aliases: a as Record<string, string>, extra_payload: e }));
        expect(Object.keys(body).sort()).to.deep.equal([...expected.keys()].sort());
        for (const [name, value] of expected) expect(body[name as string], String(name)).to.deep.equal(value);
      }),
      { numRuns: 1000 },
    );
  });
});
