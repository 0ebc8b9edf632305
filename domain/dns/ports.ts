// The DNS port the posture checks (SPF, DMARC, DKIM, MTA-STS, ...) are written against.
// SPF needs NXDOMAIN, no-data, timeout and server failure told apart (RFC 7208 §4.3, §5, §2.6.7),
// and every cache needs the TTL, so the answer says which happened rather than throwing.

export type RecordType = 'TXT' | 'A' | 'AAAA' | 'MX' | 'PTR' | 'CNAME' | 'NS'

export type DnsRecord =
  /** One TXT RR: its character-strings as sent (RFC 7208 §3.3 joins them without spaces). */
  | { type: 'TXT'; strings: string[]; ttl: number }
  | { type: 'A' | 'AAAA'; address: string; ttl: number }
  | { type: 'MX'; preference: number; exchange: string; ttl: number }
  | { type: 'PTR' | 'CNAME' | 'NS'; target: string; ttl: number }

export type DnsAnswer =
  | {
      status: 'ok'
      /** Only records of the asked type (a CNAME chain is followed by the resolver). */
      records: DnsRecord[]
      /** Whether the resolver vouched for the data (the AD bit, RFC 4035 §3.2.3). */
      authenticated: boolean
    }
  /** The name does not exist (RCODE 3). `ttl` is the negative-caching TTL when the SOA gave one. */
  | { status: 'nxdomain'; ttl?: number }
  /** The name exists but has no records of this type. */
  | { status: 'nodata'; ttl?: number }
  /** No answer in time from any server. */
  | { status: 'timeout' }
  /** SERVFAIL, REFUSED or another error RCODE, or an unparseable response. */
  | { status: 'error'; reason: string }

export interface DnsResolver {
  resolve(name: string, type: RecordType): Promise<DnsAnswer>
}
