import { expect } from 'chai';
import {
  ceilHour,
  floorHour,
  InvalidWindowError,
  resolveUsageWindow,
  splitWindow,
  startOfNextUtcMonth,
  startOfUtcMonth,
} from '../../src/usage/usage-window.js';
import { parseUtcTimestamp } from '../../src/lib/time.js';

const at = (iso: string) => new Date(iso);
const iso = (w: { since: Date; until: Date }) => ({ since: w.since.toISOString(), until: w.until.toISOString() });

function expectInvalidWindow(query: { since?: unknown; until?: unknown }, now = at('2026-11-22T17:00:00Z')): InvalidWindowError {
  try {
    resolveUsageWindow(query, now);
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidWindowError);
    const e = err as InvalidWindowError;
    expect(e.status).to.equal(400);
    expect(e.code).to.equal('invalid_window');
    expect(e.message).to.be.a('string').that.is.not.empty;
    return e;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('usage window', () => {
  describe('parseUtcTimestamp', () => {
    it('reads ISO 8601 UTC timestamps ending in Z, with or without fractional seconds', () => {
      expect(parseUtcTimestamp('2026-11-01T00:00:00Z')?.toISOString()).to.equal('2026-11-01T00:00:00.000Z');
      expect(parseUtcTimestamp('2026-11-01T12:34:56.7Z')?.toISOString()).to.equal('2026-11-01T12:34:56.700Z');
      expect(parseUtcTimestamp('2026-11-01T12:34:56.789Z')?.toISOString()).to.equal('2026-11-01T12:34:56.789Z');
      expect(parseUtcTimestamp('2028-02-29T23:59:59Z')?.toISOString()).to.equal('2028-02-29T23:59:59.000Z');
      expect(parseUtcTimestamp('0050-06-01T00:00:00Z')?.getUTCFullYear()).to.equal(50);
    });

    it('rounds digits below the millisecond up (stored times are whole milliseconds: same rows selected)', () => {
      expect(parseUtcTimestamp('2026-11-01T00:00:00.000000Z')?.toISOString()).to.equal('2026-11-01T00:00:00.000Z');
      expect(parseUtcTimestamp('2026-11-01T00:00:00.000001Z')?.toISOString()).to.equal('2026-11-01T00:00:00.001Z');
      expect(parseUtcTimestamp('2026-11-01T00:00:00.999000001Z')?.toISOString()).to.equal('2026-11-01T00:00:01.000Z');
    });

    it('refuses other offsets, date-only forms, impossible dates and garbage', () => {
      const bad = [
        '2026-11-01T00:00:00+00:00',
        '2026-11-01T00:00:00-05:00',
        '2026-11-01T00:00:00',
        '2026-11-01',
        '2026-11-01 00:00:00Z',
        '2026-11-01T00:00Z',
        '2026-11-01t00:00:00z',
        '2026-13-01T00:00:00Z',
        '2026-00-10T00:00:00Z',
        '2026-02-29T00:00:00Z',
        '2026-04-31T00:00:00Z',
        '2026-11-01T24:00:00Z',
        '2026-11-01T23:60:00Z',
        '2026-11-01T23:59:60Z',
        '2026-11-01T00:00:00.Z',
        '2026-11-01T00:00:00.1234567890Z',
        '0000-01-01T00:00:00Z',
        '+02026-11-01T00:00:00Z',
        '1793570400',
        'yesterday',
        '',
        ' 2026-11-01T00:00:00Z',
      ];
      for (const text of bad) expect(parseUtcTimestamp(text), text).to.equal(null);
      for (const value of [undefined, null, 1793570400000, ['2026-11-01T00:00:00Z'], {}]) expect(parseUtcTimestamp(value)).to.equal(null);
    });
  });

  describe('hours and months', () => {
    it('floors and ceils to UTC hours', () => {
      expect(floorHour(at('2026-11-01T10:59:59.999Z')).toISOString()).to.equal('2026-11-01T10:00:00.000Z');
      expect(floorHour(at('2026-11-01T10:00:00Z')).toISOString()).to.equal('2026-11-01T10:00:00.000Z');
      expect(ceilHour(at('2026-11-01T10:00:00.001Z')).toISOString()).to.equal('2026-11-01T11:00:00.000Z');
      expect(ceilHour(at('2026-11-01T10:00:00Z')).toISOString()).to.equal('2026-11-01T10:00:00.000Z');
    });

    it('finds UTC calendar month bounds, across years', () => {
      expect(startOfUtcMonth(at('2026-12-31T23:59:59.999Z')).toISOString()).to.equal('2026-12-01T00:00:00.000Z');
      expect(startOfNextUtcMonth(at('2026-12-31T23:59:59.999Z')).toISOString()).to.equal('2027-01-01T00:00:00.000Z');
      expect(startOfNextUtcMonth(at('2028-02-29T12:00:00Z')).toISOString()).to.equal('2028-03-01T00:00:00.000Z');
    });
  });

  describe('resolveUsageWindow', () => {
    const now = at('2026-11-22T17:54:44.123Z');

    it('defaults to the current UTC calendar month', () => {
      expect(iso(resolveUsageWindow({}, now))).to.deep.equal({ since: '2026-11-01T00:00:00.000Z', until: '2026-12-01T00:00:00.000Z' });
      expect(iso(resolveUsageWindow({}, at('2026-12-31T23:59:59.999Z')))).to.deep.equal({
        since: '2026-12-01T00:00:00.000Z',
        until: '2027-01-01T00:00:00.000Z',
      });
    });

    it('takes both bounds as given', () => {
      expect(iso(resolveUsageWindow({ since: '2026-10-31T22:30:00Z', until: '2026-11-01T01:15:00.5Z' }, now))).to.deep.equal({
        since: '2026-10-31T22:30:00.000Z',
        until: '2026-11-01T01:15:00.500Z',
      });
    });

    it('with since alone, ends now', () => {
      expect(iso(resolveUsageWindow({ since: '2026-11-20T00:00:00Z' }, now))).to.deep.equal({ since: '2026-11-20T00:00:00.000Z', until: now.toISOString() });
    });

    it('with until alone, starts at the first instant of the calendar month holding the moment before until', () => {
      expect(iso(resolveUsageWindow({ until: '2026-11-01T00:00:00Z' }, now))).to.deep.equal({
        since: '2026-10-01T00:00:00.000Z',
        until: '2026-11-01T00:00:00.000Z',
      });
      expect(iso(resolveUsageWindow({ until: '2026-11-15T08:00:00Z' }, now))).to.deep.equal({
        since: '2026-11-01T00:00:00.000Z',
        until: '2026-11-15T08:00:00.000Z',
      });
      expect(iso(resolveUsageWindow({ until: '2026-11-01T00:00:00.001Z' }, now))).to.deep.equal({
        since: '2026-11-01T00:00:00.000Z',
        until: '2026-11-01T00:00:00.001Z',
      });
    });

    it('accepts exactly 366 days, refuses a millisecond more', () => {
      const w = resolveUsageWindow({ since: '2025-11-01T00:00:00Z', until: '2026-11-02T00:00:00Z' }, now);
      expect(w.until.getTime() - w.since.getTime()).to.equal(366 * 86_400_000);
      expectInvalidWindow({ since: '2025-11-01T00:00:00Z', until: '2026-11-02T00:00:00.001Z' });
      expectInvalidWindow({ since: '2024-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' });
      expectInvalidWindow({ since: '2025-11-01T00:00:00Z' }, now);
    });

    it('refuses until at or before since', () => {
      expectInvalidWindow({ since: '2026-11-01T00:00:00Z', until: '2026-11-01T00:00:00Z' });
      expectInvalidWindow({ since: '2026-11-02T00:00:00Z', until: '2026-11-01T00:00:00Z' });
      expectInvalidWindow({ since: '2026-11-01T00:00:00.0001Z', until: '2026-11-01T00:00:00.0009Z' });
      expect(expectInvalidWindow({ since: '2026-12-01T00:00:00Z' }, now).message).to.match(/now/);
    });

    it('refuses a bound that is not an ISO 8601 UTC timestamp, naming it', () => {
      expect(expectInvalidWindow({ since: '2026-11-01' }).message).to.match(/^since/);
      expect(expectInvalidWindow({ until: '2026-11-01T00:00:00+01:00' }).message).to.match(/^until/);
      expectInvalidWindow({ since: 'garbage', until: '2026-11-01T00:00:00Z' });
      expectInvalidWindow({ since: ['2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z'] });
      expectInvalidWindow({ since: '' });
    });
  });
});

describe('splitWindow', () => {
  const window = (since: string, until: string) => ({ since: at(since), until: at(until) });
  const show = (split: ReturnType<typeof splitWindow>) => ({
    rolled: split.rolled && split.rolled.map((d) => d.toISOString()),
    raw: split.raw.map((r) => r.map((d) => d.toISOString())),
  });

  it('reads everything raw before the first rollup', () => {
    expect(show(splitWindow(window('2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z'), null))).to.deep.equal({
      rolled: null,
      raw: [['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']],
    });
  });

  it('takes whole hours below the watermark from buckets, partial edges and the rest raw', () => {
    expect(show(splitWindow(window('2026-10-31T22:30:00Z', '2026-11-22T17:54:00Z'), at('2026-11-22T16:00:00Z')))).to.deep.equal({
      rolled: ['2026-10-31T23:00:00.000Z', '2026-11-22T16:00:00.000Z'],
      raw: [
        ['2026-10-31T22:30:00.000Z', '2026-10-31T23:00:00.000Z'],
        ['2026-11-22T16:00:00.000Z', '2026-11-22T17:54:00.000Z'],
      ],
    });
  });

  it('stops at the last whole hour when the window ends before the watermark', () => {
    expect(show(splitWindow(window('2026-11-01T00:00:00Z', '2026-11-02T01:15:00Z'), at('2026-11-22T16:00:00Z')))).to.deep.equal({
      rolled: ['2026-11-01T00:00:00.000Z', '2026-11-02T01:00:00.000Z'],
      raw: [['2026-11-02T01:00:00.000Z', '2026-11-02T01:15:00.000Z']],
    });
    expect(show(splitWindow(window('2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z'), at('2026-11-22T16:00:00Z')))).to.deep.equal({
      rolled: ['2026-11-01T00:00:00.000Z', '2026-11-02T00:00:00.000Z'],
      raw: [],
    });
  });

  it('reads raw a window inside one hour, or wholly at or after the watermark', () => {
    expect(show(splitWindow(window('2026-11-01T10:15:00Z', '2026-11-01T10:45:00Z'), at('2026-11-22T16:00:00Z'))).raw).to.deep.equal([
      ['2026-11-01T10:15:00.000Z', '2026-11-01T10:45:00.000Z'],
    ]);
    expect(show(splitWindow(window('2026-11-22T16:00:00Z', '2026-12-01T00:00:00Z'), at('2026-11-22T16:00:00Z')))).to.deep.equal({
      rolled: null,
      raw: [['2026-11-22T16:00:00.000Z', '2026-12-01T00:00:00.000Z']],
    });
  });

  it('covers every millisecond of the window exactly once', () => {
    const mark = at('2026-11-22T16:00:00Z');
    for (const [since, until] of [
      ['2026-10-31T22:30:00.001Z', '2026-11-22T17:54:00Z'],
      ['2026-11-22T15:59:59.999Z', '2026-11-22T16:00:00.001Z'],
      ['2026-11-22T15:00:00Z', '2026-11-22T16:00:00Z'],
    ]) {
      const split = splitWindow(window(since, until), mark);
      const parts = [...(split.rolled ? [split.rolled] : []), ...split.raw].sort((a, b) => a[0].getTime() - b[0].getTime());
      expect(parts[0][0].toISOString()).to.equal(at(since).toISOString());
      expect(parts[parts.length - 1][1].toISOString()).to.equal(at(until).toISOString());
      for (let i = 1; i < parts.length; i++) expect(parts[i][0].getTime()).to.equal(parts[i - 1][1].getTime());
      for (const [from, to] of parts) expect(from.getTime()).to.be.below(to.getTime());
    }
  });
});
