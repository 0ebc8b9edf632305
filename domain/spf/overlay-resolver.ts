// A DnsResolver that answers one name's TXT query with a proposed SPF record and sends every other
// question to the real resolver, so check_host() (RFC 7208 §4) evaluates a record before it is
// published while its include:, a, mx, exists and redirect targets still resolve for real.

import type { DnsAnswer, DnsResolver } from '../dns/ports.ts'
import { normalizeName } from './lookups.ts'

/**
 * Serves `record` as the only TXT RR of `domain`. The whole TXT answer is replaced, not merged
 * with the published one: check_host() only reads the v=spf1 record among a name's TXT RRs
 * (RFC 7208 §4.5), and keeping the published SPF record next to the proposed one would be two SPF
 * records, a permerror. Not asking the real DNS for that name also means a simulation does not
 * depend on the domain's current DNS answering.
 *
 * The text is one character-string: joined or not, §3.3 reads the same record, and the DNS port
 * has no 255-octet limit. The TTL is 0 because the answer is not DNS data anyone may cache.
 */
export function overlaySpfRecord(dns: DnsResolver, domain: string, record: string): DnsResolver {
  const owner = normalizeName(domain)
  const proposed: DnsAnswer = {
    status: 'ok',
    records: [{ type: 'TXT', strings: [record], ttl: 0 }],
    // Nobody vouched for it (RFC 4035 §3.2.3): it is not in the DNS at all.
    authenticated: false,
  }
  return {
    resolve(name, type) {
      if (type === 'TXT' && normalizeName(name) === owner) {
        // A fresh copy each time, so a caller that edits its answer cannot change later ones.
        return Promise.resolve(structuredClone(proposed))
      }
      return dns.resolve(name, type)
    },
  }
}
