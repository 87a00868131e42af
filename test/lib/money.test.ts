import { expect } from 'chai';
import { chargeForSeconds, formatMoney, MAX_BALANCE_MICROS, parseMoney } from '../../src/lib/money.js';

describe('money', () => {
  it('parses decimal strings into integer micro-units', () => {
    expect(parseMoney('1.25')).to.equal(1_250_000n);
    expect(parseMoney('0.000001')).to.equal(1n);
    expect(parseMoney('-3')).to.equal(-3_000_000n);
    expect(parseMoney('123456789012.999999')).to.equal(123_456_789_012_999_999n);
  });

  it('refuses anything that is not a plain decimal with at most 6 fractional digits', () => {
    for (const bad of ['', '1.', '.5', '1.1234567', '1e3', 'abc', '+1', '1,5', ' 1', 'NaN', '0x10']) {
      expect(parseMoney(bad), bad).to.equal(null);
    }
  });

  it('formats with exactly six fractional digits', () => {
    expect(formatMoney(1_250_000n)).to.equal('1.250000');
    expect(formatMoney(0n)).to.equal('0.000000');
    expect(formatMoney(-1n)).to.equal('-0.000001');
    expect(formatMoney(-12_345_678n)).to.equal('-12.345678');
  });

  it('round-trips every formatted amount', () => {
    for (const micros of [0n, 1n, 999_999n, 1_000_000n, -7_000_001n, 10n ** 15n, MAX_BALANCE_MICROS, -MAX_BALANCE_MICROS]) {
      expect(parseMoney(formatMoney(micros))).to.equal(micros);
    }
  });

  it('charges calls per started second at a per-minute rate, rounding up to the micro', () => {
    const perMinute = parseMoney('0.12')!; // 0.002 per second
    expect(chargeForSeconds(60, perMinute)).to.equal(perMinute);
    expect(chargeForSeconds(1, perMinute)).to.equal(2_000n);
    expect(chargeForSeconds(0, perMinute)).to.equal(0n);
    expect(chargeForSeconds(1, 1n)).to.equal(1n); // 1/60 of a micro is never given away
    expect(chargeForSeconds(61, parseMoney('1')!)).to.equal(1_016_667n);
    expect(() => chargeForSeconds(1.5, perMinute)).to.throw(RangeError);
  });
});
