import { isIP } from 'node:net'
import type { DnsResolver } from '../../domain/dns/ports.ts'

// SSRF protection for every outbound request to a user-supplied host (MTA-STS policies, webhooks,
// DNS provider APIs, OAuth): an address is accepted only when it is globally reachable, unless the
// operator allows private targets. The ranges follow the IANA IPv4 and IPv6 Special-Purpose Address
// Registries (RFC 6890, RFC 8190): every block whose "Globally Reachable" is False or N/A is
// refused, and a few that are True but are protocol anycast or identifiers rather than servers a
// request could be meant for (192.0.0.9-10, 2001:1::1-3, 2001:3::/32, ORCHIDv2 and the like,
// inside the refused 192.0.0.0/24 and 2001::/23).
//
// The addresses are compared as numbers here rather than with node:net's BlockList: its treatment
// of IPv4 rules against IPv4-mapped IPv6 addresses is implicit, and the embedded IPv4 of ::ffff:0:0/96
// has to be read out of any spelling (URLs give `::ffff:7f00:1`, not `::ffff:127.0.0.1`).

/** A block of addresses: network and prefix length. */
type Block = readonly [network: string, prefix: number]

const IPV4_REFUSED: readonly Block[] = [
  ['0.0.0.0', 8], // "this network" (RFC 791, RFC 1122 §3.2.1.3)
  ['10.0.0.0', 8], // private use (RFC 1918)
  ['100.64.0.0', 10], // shared address space, CGNAT (RFC 6598)
  ['127.0.0.0', 8], // loopback (RFC 1122)
  ['169.254.0.0', 16], // link-local, cloud metadata at 169.254.169.254 (RFC 3927)
  ['172.16.0.0', 12], // private use (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments (RFC 6890), with its anycast 192.0.0.9-10
  ['192.0.2.0', 24], // documentation TEST-NET-1 (RFC 5737)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast (RFC 7526)
  ['192.168.0.0', 16], // private use (RFC 1918)
  ['198.18.0.0', 15], // benchmarking (RFC 2544)
  ['198.51.100.0', 24], // documentation TEST-NET-2 (RFC 5737)
  ['203.0.113.0', 24], // documentation TEST-NET-3 (RFC 5737)
  ['224.0.0.0', 4], // multicast (RFC 5771)
  ['240.0.0.0', 4], // reserved (RFC 1112), with the limited broadcast 255.255.255.255 (RFC 919)
]

// IPv6: IANA hands out unicast addresses from 2000::/3 only (IANA IPv6 Address Space registry,
// RFC 4291 §2.4); everything outside it is refused without a list: ::/128, ::1/128, the deprecated
// IPv4-compatible ::/96 (RFC 4291 §2.5.5.1), IPv4-translated ::ffff:0:0:0/96 (RFC 2765), NAT64
// 64:ff9b::/96 (RFC 6052) and its local-use 64:ff9b:1::/48 (RFC 8215), discard-only 100::/64
// (RFC 6666), SRv6 SIDs 5f00::/16 (RFC 9602), unique-local fc00::/7 (RFC 4193), link-local
// fe80::/10, the deprecated site-local fec0::/10 (RFC 3879), multicast ff00::/8 and the rest of
// the space reserved by the IETF. The one exception is IPv4-mapped ::ffff:0:0/96 (RFC 4291
// §2.5.5.2), judged by the IPv4 address it carries since a dual-stack socket connects to that.
const IPV6_GLOBAL_UNICAST: Block = ['2000::', 3]
/** Inside 2000::/3, the special-purpose blocks that are not globally reachable. */
const IPV6_REFUSED: readonly Block[] = [
  // IETF protocol assignments (RFC 2928; registry: not globally reachable). Covers Teredo
  // 2001::/32 (RFC 4380), whose addresses lead to an IPv4 server and a NAT-obfuscated client
  // address, benchmarking 2001:2::/48 (RFC 5180), the deprecated ORCHID 2001:10::/28, and the
  // anycast and identifier blocks listed above. RIR allocations start at 2001:200::/23.
  ['2001::', 23],
  ['2001:db8::', 32], // documentation (RFC 3849)
  // 6to4 (RFC 3056), refused whole rather than judged by the IPv4 address it embeds: the packet
  // goes through whatever 6to4 relay the path finds (or the host's own 6to4 interface) to that
  // IPv4 address, so where it lands depends on relays outside our control; the registry marks the
  // block's reachability N/A; RFC 7526 (BCP 196) deprecated the anycast relays (192.88.99.0/24)
  // and RFC 6343 has 6to4 off by default. A real receiver is not reachable only this way.
  ['2002::', 16],
  ['3fff::', 20], // documentation (RFC 9637)
]

/** A parsed block: the network's value shifted down to its prefix bits. */
interface Range {
  bits: bigint
  network: bigint
}

function range([network, prefix]: Block, size: number, parse: (text: string) => bigint): Range {
  const bits = BigInt(size - prefix)
  return { bits, network: parse(network) >> bits }
}

function inRange(value: bigint, { bits, network }: Range): boolean {
  return value >> bits === network
}

/** A dotted-quad IPv4 address (as `isIP` accepts it: four decimal octets) as a 32-bit number. */
function ipv4Value(address: string): bigint {
  return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(octet), 0n)
}

/** An IPv6 address (as `isIP` accepts it, without a zone) as a 128-bit number. */
function ipv6Value(address: string): bigint {
  const quad = /\d+\.\d+\.\d+\.\d+$/.exec(address)
  let text = address
  if (quad) {
    const ipv4 = ipv4Value(quad[0])
    text = `${address.slice(0, quad.index)}${(ipv4 >> 16n).toString(16)}:${(ipv4 & 0xffffn).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const words = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return words.reduce((value, word) => (value << 16n) | BigInt(`0x${word}`), 0n)
}

const ipv4Refused = IPV4_REFUSED.map((block) => range(block, 32, ipv4Value))
const ipv6GlobalUnicast = range(IPV6_GLOBAL_UNICAST, 128, ipv6Value)
const ipv6Refused = IPV6_REFUSED.map((block) => range(block, 128, ipv6Value))
const IPV4_MAPPED_PREFIX = 0xffffn // ::ffff:0:0/96, the value's upper 96 bits

function isPublicIpv4(value: bigint): boolean {
  return !ipv4Refused.some((refused) => inRange(value, refused))
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return isPublicIpv4(ipv4Value(address))
  // A zone (`fe80::1%eth0`) only has a meaning on non-global scopes.
  if (family !== 6 || address.includes('%')) return false
  const value = ipv6Value(address)
  if (value >> 32n === IPV4_MAPPED_PREFIX) return isPublicIpv4(value & 0xffff_ffffn)
  return inRange(value, ipv6GlobalUnicast) && !ipv6Refused.some((refused) => inRange(value, refused))
}

export type HostCheck = { ok: true; addresses: string[] } | { ok: false; reason: string }

/** Resolves a host and refuses it when any of its addresses is not public (no partial trust). */
export async function checkPublicHost(
  deps: { dns: DnsResolver; allowPrivate: boolean },
  host: string,
): Promise<HostCheck> {
  if (isIP(host)) {
    return deps.allowPrivate || isPublicAddress(host)
      ? { ok: true, addresses: [host] }
      : { ok: false, reason: `${host} is not a public address` }
  }
  const answers = await Promise.all([deps.dns.resolve(host, 'A'), deps.dns.resolve(host, 'AAAA')])
  const addresses = answers.flatMap((answer) =>
    answer.status === 'ok'
      ? answer.records.flatMap((r) => (r.type === 'A' || r.type === 'AAAA' ? [r.address] : []))
      : [],
  )
  if (addresses.length === 0) return { ok: false, reason: `${host} has no address` }
  if (!deps.allowPrivate) {
    const inside = addresses.find((address) => !isPublicAddress(address))
    if (inside !== undefined)
      return { ok: false, reason: `${host} resolves to a non-public address (${inside})` }
  }
  return { ok: true, addresses }
}
