import { formatIp, maskIp, parseIp, unmapIpv4 } from '../spf/ip.ts'

// docs/api.md "Authentication and limits": limits per client count an IPv6 client by its /56.
// One end site is given a /64 at least and often a /56 or /48 (RFC 6177 §2), and may send from
// any address in it, so counting each address apart let one host walk past a per-address limit by
// changing its address. /56 is also express-rate-limit's default for the same reason.

export const IPV6_CLIENT_PREFIX = 56

/**
 * The subject a per-client limit counts: an IPv4 address (an IPv4-mapped IPv6 one unmapped,
 * RFC 4291 §2.5.5.2) as is, an IPv6 address as its /56 network (or `ipv6Prefix`). Anything else (an unparsable
 * X-Forwarded-For entry, "unknown") is counted as given.
 */
export function clientNetwork(address: string, ipv6Prefix = IPV6_CLIENT_PREFIX): string {
  const ip = parseIp(address)
  if (ip === null) return address
  const client = unmapIpv4(ip)
  if (client.family === 4) return formatIp(client)
  return `${formatIp(maskIp(client, ipv6Prefix))}/${ipv6Prefix}`
}
