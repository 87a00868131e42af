import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Addresses a webhook must not reach unless private networks are allowed: loopback, private,
// link-local (cloud metadata lives there), carrier-grade NAT, unspecified, multicast, and the
// IPv6 equivalents (IPv4-mapped addresses are checked as IPv4).
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPrivateAddress(mapped);
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class RefusedAddressError extends Error {}

/**
 * Resolves `host` at delivery time and returns the address to connect to. Unless private
 * networks are allowed, refuses a host with ANY private address; the request then goes to the
 * address checked here, so a DNS answer that changes in between (rebinding) cannot slip by.
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
