import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

// ipaddr.js knows the special-purpose ranges (incl. link-local cloud metadata); all but 'unicast' is refused.
const isPublic = (address: IPv4 | IPv6) => address.range() === 'unicast';

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

const fromParts = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** IPv4 addresses an IPv6 address can reach through a translator or tunnel; [] none; null: refuse outright. */
function embeddedIPv4(address: IPv6): IPv4[] | null {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (SIIT)
      return [fromParts(p[6], p[7])];
    case 'rfc6052':
      // 64:ff9b::/96 carries the address in its last 32 bits; the local-use 64:ff9b:1::/48
      // lets each network place it where it likes, so nothing can be read from it.
      return address.match(NAT64_WELL_KNOWN) ? [fromParts(p[6], p[7])] : null;
    case '6to4': // 2002:AABB:CCDD::/48
      return [fromParts(p[1], p[2])];
    case 'teredo': // 2001:0:server:flags:port:~client, both reachable
      return [fromParts(p[2], p[3]), fromParts(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      // IPv4-compatible ::/96, deprecated but still routed by some stacks; ipaddr.js has no
      // range for it (::7f00:1 is 'unicast' to it, while it reads the text ::127.0.0.1 as
      // mapped: judged by the same IPv4 either way). :: and ::1 land here too, as 0.0.0.0/8.
      return address.match(IPV4_COMPATIBLE) ? [fromParts(p[6], p[7])] : [];
  }
}

/** Whether `address` is off limits unless private networks are allowed; non-strict forms (`127.1`, `0x7f.0.0.1`) are refused. */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 0) return true;
  let parsed: IPv4 | IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return true;
  }
  if (parsed instanceof ipaddr.IPv4) return !isPublic(parsed);
  const embedded = embeddedIPv4(parsed);
  if (embedded === null) return true;
  return embedded.length > 0 ? !embedded.every(isPublic) : !isPublic(parsed);
}

export class RefusedAddressError extends Error {}

/**
 * The address to connect to for `host`; refuses a host with ANY private address. The caller
 * connects to this checked address, so DNS rebinding cannot slip by.
 */
export async function resolveDestination(host: string, allowPrivate: boolean): Promise<{ address: string; family: 4 | 6 }> {
  const bare = host.replace(/^\[|\]$/g, '');
  const answers = isIP(bare) ? [{ address: bare, family: isIP(bare) as 4 | 6 }] : await lookup(bare, { all: true, verbatim: true });
  if (answers.length === 0) throw new RefusedAddressError(`${host} does not resolve`);
  if (!allowPrivate) {
    const refused = answers.find((a) => isPrivateAddress(a.address));
    if (refused) throw new RefusedAddressError(`refused: ${host} resolves to ${refused.address}, a private or reserved address`);
  }
  return { address: answers[0].address, family: answers[0].family as 4 | 6 };
}
