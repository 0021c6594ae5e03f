import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

// Cloud metadata endpoints get their own name in refusals: they are what an SSRF attacker wants.
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

// IPv6 forms that carry an IPv4 address inside them; the IPv4 address decides.
const EMBEDDING_RANGES: Array<{ name: string; cidr: [IPv6, number]; extract(address: IPv6): IPv4 }> = [
  { name: 'IPv4-mapped', cidr: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), extract: (a) => fromWords(a.parts[6], a.parts[7]) },
  { name: 'IPv4-translated', cidr: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), extract: (a) => fromWords(a.parts[6], a.parts[7]) },
  { name: 'NAT64', cidr: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), extract: (a) => fromWords(a.parts[6], a.parts[7]) },
  { name: '6to4', cidr: ipaddr.IPv6.parseCIDR('2002::/16'), extract: (a) => fromWords(a.parts[1], a.parts[2]) },
  // Deprecated IPv4-compatible form ::a.b.c.d (:: and ::1 themselves are caught as unspecified/loopback first).
  { name: 'IPv4-compatible', cidr: ipaddr.IPv6.parseCIDR('::/96'), extract: (a) => fromWords(a.parts[6], a.parts[7]) },
];

/**
 * Why an IP address must not be fetched, or undefined when it is ordinary public unicast.
 * Everything ipaddr.js does not class as `unicast` is refused (loopback, private, link-local,
 * CGNAT, multicast, unspecified, broadcast, reserved, documentation, benchmarking, ULA `fc00::/7`,
 * Teredo, NAT64 local-use…), and IPv6 forms embedding an IPv4 address are judged by that address.
 *
 * @example
 *   refusedAddressReason('10.0.0.1')            // 'private'
 *   refusedAddressReason('::ffff:127.0.0.1')    // 'IPv4-mapped loopback'
 *   refusedAddressReason('93.184.215.14')       // undefined
 */
export function refusedAddressReason(ip: string): string | undefined {
  if (!ipaddr.isValid(ip)) return 'not an IP address';
  const address = ipaddr.parse(ip);
  if (METADATA_ADDRESSES.has(address.toNormalizedString()) || METADATA_ADDRESSES.has(address.toString())) return 'cloud metadata';
  if (address.kind() === 'ipv4') return rangeReason(address as IPv4);
  const v6 = address as IPv6;
  const v6Range = v6.range();
  if (v6Range === 'unspecified' || v6Range === 'loopback') return v6Range;
  for (const embedding of EMBEDDING_RANGES) {
    if (!v6.match(embedding.cidr)) continue;
    const inner = embedding.extract(v6);
    if (METADATA_ADDRESSES.has(inner.toString())) return `${embedding.name} cloud metadata`;
    const reason = rangeReason(inner);
    return reason ? `${embedding.name} ${reason}` : undefined;
  }
  return rangeReason(v6);
}

function rangeReason(address: IPv4 | IPv6): string | undefined {
  const range = address.range();
  return range === 'unicast' ? undefined : (RANGE_NAMES[range] ?? range);
}

const RANGE_NAMES: Record<string, string> = {
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique local (private)',
};

function fromWords(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

// Names that resolve to the machine itself or a private network by convention (RFC 6761, 6762, ICANN .internal).
const REFUSED_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)\.?$/i;

/**
 * Why a host name must be refused before any DNS query, or undefined.
 *
 * @example
 *   refusedHostnameReason('localhost')                  // 'a local-only name'
 *   refusedHostnameReason('metadata.google.internal')   // 'a local-only name'
 */
export function refusedHostnameReason(hostname: string): string | undefined {
  return REFUSED_NAME.test(hostname) ? 'a local-only name' : undefined;
}
