import { BlockList, isIP } from 'node:net'
import type { DnsResolver } from '../../domain/dns/ports.ts'

// SSRF protection for every outbound request to a user-supplied host (MTA-STS policies, webhooks):
// loopback, private, link-local (cloud metadata at 169.254.169.254), CGNAT, multicast, reserved and
// documentation ranges are refused unless the operator allows private targets.

const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4')
}
// IPv4-mapped IPv6 (::ffff:0:0/96) is judged by its embedded IPv4 address in isPublicAddress; a
// BlockList rule for it would also match every plain IPv4 address.
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6')
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !blocked.check(address, 'ipv4')
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
    if (mapped) return isPublicAddress(mapped[1]!)
    return !blocked.check(address, 'ipv6')
  }
  return false
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
