import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key a client's limits and connection cap count under. One person holds one IPv4
 * address but usually a whole IPv6 network (a /64 is the smallest a provider hands out), and
 * one IPv6 address has many spellings (`2001:DB8::1`, `2001:db8:0:0::1`, ...). So an IPv6
 * client is keyed by its network, `2001:db8::/64`, from the canonical form of its
 * address; an IPv4-mapped address (`::ffff:192.0.2.1`, as a dual-stack socket reports an IPv4
 * peer) is the IPv4 address; anything else (no address at all) is kept as given.
 */
export function clientKey(address: string | undefined, ipv6Prefix: number): string {
  if (address === undefined) return 'unknown';
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (isIPv4Mapped(groups))
    return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  const kept = groups.map((group, index) => {
    const bits = Math.min(16, Math.max(0, ipv6Prefix - index * 16));
    return bits === 16 ? group : group & (0xffff << (16 - bits)) & 0xffff;
  });
  return `${canonicalIPv6(kept)}/${ipv6Prefix}`;
}

/** The eight 16-bit groups of an IPv6 address (zone index dropped), or null for anything else. */
function ipv6Groups(address: string): number[] | null {
  const bare = address.replace(/%.*$/, '');
  if (isIPv4(bare) || !isIPv6(bare)) return null;
  // The URL parser writes an IPv6 host in its one canonical form (RFC 5952): lower case,
  // no leading zeros, the longest run of zero groups as `::`, an embedded IPv4 part in hex.
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split('::');
  const part = (text: string | undefined) =>
    text ? text.split(':').map((group) => parseInt(group, 16)) : [];
  const before = part(head);
  const after = part(tail);
  const zeros = tail === undefined ? [] : Array<number>(8 - before.length - after.length).fill(0);
  return [...before, ...zeros, ...after];
}

function isIPv4Mapped(groups: number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

function canonicalIPv6(groups: number[]): string {
  return new URL(`http://[${groups.map((group) => group.toString(16)).join(':')}]/`).hostname.slice(1, -1);
}

/**
 * The client's own address, to show it to a person (the logins list): written as clientKey
 * writes it (an IPv4-mapped address as IPv4, IPv6 in its canonical form) but whole, not its
 * network; anything else as given, at most 64 characters; null when there is none.
 */
export function clientAddress(address: string | undefined): string | null {
  if (address === undefined || address === '') return null;
  const groups = ipv6Groups(address);
  if (!groups) return address.slice(0, 64);
  return isIPv4Mapped(groups) ? clientKey(address, 128) : canonicalIPv6(groups);
}
