import { expect } from 'chai';
import { clientAddressSubject } from '../../src/lib/rate-limit.js';

describe('rate limit: the subject of a per-client-address limit', () => {
  it('is the IPv4 address, also when Node reports it IPv4-mapped', () => {
    expect(clientAddressSubject('203.0.113.9')).to.equal('203.0.113.9');
    expect(clientAddressSubject('::ffff:203.0.113.9')).to.equal('203.0.113.9');
  });

  it('is the /64 of an IPv6 address', () => {
    expect(clientAddressSubject('2001:db8:1:2:3:4:5:6')).to.equal('2001:db8:1:2::/64');
    expect(clientAddressSubject('2001:db8:1:2::ffff')).to.equal('2001:db8:1:2::/64');
    expect(clientAddressSubject('fe80::1%eth0')).to.equal('fe80::/64');
    expect(clientAddressSubject('::1')).to.equal('::/64');
  });

  it('is one shared "unknown" when there is no address (the socket already closed)', () => {
    expect(clientAddressSubject(undefined)).to.equal('unknown');
    expect(clientAddressSubject('')).to.equal('unknown');
  });
});
