import { withDemoZone } from '../../domain/demo/demo-zone.ts'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { type CachingDnsResolver, withTtlCache } from '../../infrastructure/dns/dns-cache.ts'
import { createDnsPacketResolver } from '../../infrastructure/dns/dns-packet-resolver.ts'
import type { Config } from '../config.ts'

/**
 * The resolvers a process uses, from DNS_SERVERS and DNS_TIMEOUT_MS: `dns`, one TTL cache shared by
 * every check in the process, and `verificationDns`, uncached (a fresh TXT must not wait out a
 * cached NXDOMAIN).
 */
export function resolvers(
  config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>,
  now: () => Date,
): { dns: CachingDnsResolver; verificationDns: DnsResolver } {
  // The demo domain's records are answered in-process (docs/demo.md); everything else is real DNS.
  const upstream = withDemoZone(
    createDnsPacketResolver({
      servers: config.dnsServers ?? undefined,
      timeoutMs: config.dnsTimeoutMs,
    }),
  )
  return { dns: withTtlCache(upstream, { now: () => now().getTime() }), verificationDns: upstream }
}
