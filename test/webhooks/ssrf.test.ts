import { expect } from 'chai';
import fc from 'fast-check';
import { isPrivateAddress, RefusedAddressError, resolveDestination } from '../../src/webhooks/ssrf.js';

const hex = (n: number) => n.toString(16);

/** Every IPv6 form that carries the IPv4 address `octets`, by name. */
function embeddings([a, b, c, d]: number[]): Record<string, string> {
  const dotted = `${a}.${b}.${c}.${d}`;
  const [high, low] = [(a << 8) | b, (c << 8) | d];
  const pair = `${hex(high)}:${hex(low)}`;
  // Teredo stores the client's address inverted; the partner in each slot is public (8.8.8.8),
  // so the verdict depends on `octets` alone.
  const inverted = `${hex(high ^ 0xffff)}:${hex(low ^ 0xffff)}`;
  return {
    'IPv4-mapped': `::ffff:${dotted}`,
    'IPv4-mapped (hex)': `::ffff:${pair}`,
    'SIIT (rfc6145)': `::ffff:0:${dotted}`,
    'NAT64 64:ff9b::/96': `64:ff9b::${dotted}`,
    'NAT64 64:ff9b::/96 (hex)': `64:ff9b::${pair}`,
    '6to4': `2002:${pair}::`,
    '6to4 (a host in its /48)': `2002:${pair}:1:2:3:4:5`,
    'Teredo client': `2001:0:808:808:8000:ffff:${inverted}`,
    'Teredo server': `2001:0:${pair}:8000:ffff:f7f7:f7f7`,
    'IPv4-compatible': `::${dotted}`,
    'IPv4-compatible (hex)': `::${pair}`,
  };
}

const octetsOf = (address: string) => address.split('.').map(Number);

const REFUSED_V4 = {
  loopback: '127.0.0.1',
  'loopback, not .1': '127.255.0.7',
  'private 10/8': '10.1.2.3',
  'private 172.16/12': '172.16.0.1',
  'private 192.168/16': '192.168.1.1',
  'link-local (cloud metadata)': '169.254.169.254',
  'carrier-grade NAT': '100.64.0.1',
  unspecified: '0.0.0.0',
  'this network': '0.1.2.3',
  multicast: '224.0.0.1',
  broadcast: '255.255.255.255',
  'reserved 240/4': '240.0.0.1',
  'IETF protocol assignments': '192.0.0.8',
  'documentation (TEST-NET-1)': '192.0.2.1',
  benchmarking: '198.18.0.1',
  '6to4 relay anycast': '192.88.99.1',
};
const PUBLIC_V4 = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.63.255.255', '172.32.0.1'];

describe('SSRF guard: isPrivateAddress', () => {
  describe('plain IPv4', () => {
    for (const [kind, address] of Object.entries(REFUSED_V4)) {
      it(`refuses ${kind} (${address})`, () => expect(isPrivateAddress(address)).to.equal(true));
    }
    it('allows public addresses, right next to refused ranges too', () => {
      for (const address of PUBLIC_V4) expect(isPrivateAddress(address), address).to.equal(false);
    });
  });

  describe('IPv6 forms that embed an IPv4 address are judged by it', () => {
    for (const [kind, address] of Object.entries(REFUSED_V4)) {
      it(`refuses every embedding of ${kind} (${address})`, () => {
        for (const [form, v6] of Object.entries(embeddings(octetsOf(address)))) expect(isPrivateAddress(v6), `${form} ${v6}`).to.equal(true);
      });
    }

    it('allows every embedding of a public address', () => {
      for (const address of PUBLIC_V4) {
        for (const [form, v6] of Object.entries(embeddings(octetsOf(address)))) expect(isPrivateAddress(v6), `${form} ${v6}`).to.equal(false);
      }
    });

    it('in the compressed forms DNS answers and URLs use', () => {
      for (const v6 of [
        '::7f00:1',
        '::127.0.0.1',
        '::ffff:7f00:1',
        '::ffff:0:7f00:1',
        '64:ff9b::a9fe:a9fe',
        '2002:7f00:1::',
        '2002:a00:1::1',
        '2001:0:4136:e378:8000:63bf:80ff:fffe',
      ]) {
        expect(isPrivateAddress(v6), v6).to.equal(true);
      }
      for (const v6 of ['::808:808', '::ffff:808:808', '64:ff9b::808:808', '2002:808:808::', '2001:0:808:808:8000:63bf:f7f7:f7f7']) {
        expect(isPrivateAddress(v6), v6).to.equal(false);
      }
    });

    it('Teredo: refused when either the server or the client address is private', () => {
      // 2001:0:<server>:<flags>:<port>:<client XOR ffff:ffff>
      expect(isPrivateAddress('2001:0:808:808:8000:ffff:f7f7:f7f7'), 'both 8.8.8.8').to.equal(false);
      expect(isPrivateAddress('2001:0:7f00:1:8000:ffff:f7f7:f7f7'), 'server 127.0.0.1').to.equal(true);
      expect(isPrivateAddress('2001:0:808:808:8000:ffff:80ff:fffe'), 'client 127.0.0.1').to.equal(true);
      expect(isPrivateAddress('2001:0:808:808:8000:ffff:7f00:1'), 'client 128.255.255.254, public').to.equal(false);
    });

    it('refuses the NAT64 local-use prefix 64:ff9b:1::/48 outright, whatever it seems to carry', () => {
      for (const v6 of ['64:ff9b:1::808:808', '64:ff9b:1:808:808::', '64:ff9b:1::']) expect(isPrivateAddress(v6), v6).to.equal(true);
    });

    it('for every IPv4 address, each embedding is refused exactly when the address is', () => {
      const notable = fc.constantFrom(...[...Object.values(REFUSED_V4), ...PUBLIC_V4].map(octetsOf));
      const any = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
      fc.assert(
        fc.property(fc.oneof(any, notable), (octets) => {
          const refused = isPrivateAddress(octets.join('.'));
          for (const [form, v6] of Object.entries(embeddings(octets))) expect(isPrivateAddress(v6), `${form} ${v6}`).to.equal(refused);
        }),
        { numRuns: 2000 },
      );
    });
  });

  describe('plain IPv6', () => {
    it('refuses loopback, unspecified, link-local, unique-local, multicast, site-local, documentation, discard', () => {
      for (const v6 of ['::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00:ec2::254', 'fc00::1', 'ff02::1', 'fec0::1', '2001:db8::1', '100::1']) {
        expect(isPrivateAddress(v6), v6).to.equal(true);
      }
    });

    it('allows public addresses', () => {
      for (const v6 of ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:82b::200e']) expect(isPrivateAddress(v6), v6).to.equal(false);
    });
  });

  it('refuses anything that is not an address in the standard textual form', () => {
    for (const text of [
      '',
      'localhost',
      'example.com',
      '127.1',
      '0x7f.0.0.1',
      '2130706433',
      '010.0.0.1',
      '8.8.8.8.8',
      '[::1]',
      '::ffff:8.8.8.8:80',
      '2001:4860::8888::1',
    ]) {
      expect(isPrivateAddress(text), JSON.stringify(text)).to.equal(true);
    }
  });
});

describe('SSRF guard: resolveDestination', () => {
  async function refusal(host: string): Promise<Error> {
    try {
      await resolveDestination(host, false);
    } catch (err) {
      return err as Error;
    }
    throw new Error(`${host} was not refused`);
  }

  it('refuses a URL host that is an IPv6 literal embedding a private IPv4 address', async () => {
    for (const url of [
      'http://[::127.0.0.1]:8080/',
      'http://[::ffff:0:10.0.0.1]/',
      'http://[64:ff9b::169.254.169.254]/',
      'http://[2002:c0a8:101::]/',
      'http://[2001:0:808:808::80ff:fffe]/',
    ]) {
      const host = new URL(url).hostname;
      const err = await refusal(host);
      expect(err, url).to.be.instanceOf(RefusedAddressError);
      expect(err.message).to.match(/^refused: .* resolves to .*, a private or reserved address$/);
    }
  });

  it('refuses a hostname that resolves to a private address', async () => {
    const err = await refusal('localhost');
    expect(err).to.be.instanceOf(RefusedAddressError);
    expect(err.message).to.match(/^refused: localhost resolves to (127\.0\.0\.1|::1),/);
  });

  it('returns the address to connect to when it is public, or when private networks are allowed', async () => {
    expect(await resolveDestination('[2002:808:808::1]', false)).to.deep.equal({ address: '2002:808:808::1', family: 6 });
    expect(await resolveDestination('8.8.8.8', false)).to.deep.equal({ address: '8.8.8.8', family: 4 });
    expect(await resolveDestination('[::ffff:0:7f00:1]', true)).to.deep.equal({ address: '::ffff:0:7f00:1', family: 6 });
  });
});
