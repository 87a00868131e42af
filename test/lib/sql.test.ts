import { expect } from 'chai';
import { column, presentRow, rowShape, where } from '../../src/lib/sql.js';

describe('SQL building blocks (src/lib/sql.ts)', () => {
  it('numbers the parameters of a condition in the order they are added, skipping filters not given', () => {
    const condition = where('org_id = ? AND created_at >= ?', 'org_1', 'then')
      .equal('status', undefined)
      .matching({ call_id: 'call_1', event: undefined }, { call_id: 'd.call_id', event: 'd.event' });
    expect(String(condition)).to.equal('org_id = $1 AND created_at >= $2 AND d.call_id = $3');
    expect(condition.params).to.deep.equal(['org_1', 'then', 'call_1']);
    expect(condition.param('next')).to.equal('$4');
  });

  it('a copy of a condition is extended apart: the original keeps its clauses and parameters (a list read again starts from it)', () => {
    const original = where('org_id = ?', 'org_1');
    const copy = original.copy().and('id < ?', 'x');
    expect([String(copy), copy.params]).to.deep.equal(['org_id = $1 AND id < $2', ['org_1', 'x']]);
    expect([String(original), original.params]).to.deep.equal(['org_id = $1', ['org_1']]);
  });

  it('refuses a clause whose placeholders and values differ in number, instead of binding the wrong values', () => {
    expect(() => where('org_id = ? AND id = ?', 'org_1')).to.throw(/2 placeholder\(s\) but 1 value/);
    expect(() => where("payload ? 'outcome' AND org_id = ?", 'org_1')).to.throw(/2 placeholder\(s\) but 1 value/);
    expect(() => where('org_id = $1', 'org_1')).to.throw(/0 placeholder\(s\) but 1 value/);
  });

  it('derives the select list from a column map, expressions selected under their names', () => {
    const shape = rowShape('webhook_endpoints', { id: column<string>(), has_secret: column<boolean>("(secret <> '')"), created_at: column<Date>() });
    expect(shape.select()).to.equal("id, (secret <> '') AS has_secret, created_at");
    expect(shape.select('w')).to.equal("w.id, (secret <> '') AS has_secret, w.created_at");
    expect(shape.from('w')).to.equal('webhook_endpoints w');
  });

  it('presents a row with its times as ISO 8601 strings and everything else as it is', () => {
    const at = new Date('2026-11-24T10:00:00.123Z');
    expect(presentRow({ id: 'x', n: 3, none: null, created_at: at })).to.deep.equal({ id: 'x', n: 3, none: null, created_at: '2026-11-24T10:00:00.123Z' });
  });
});
