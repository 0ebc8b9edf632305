// The DNS provider port: the narrow set of operations dmarcwatch needs to publish records in a
// customer's own DNS (SPF, DMARC, DKIM, MTA-STS, TLS-RPT, BIMI) through Cloudflare, PowerDNS or any
// server that accepts RFC 2136 dynamic updates. Adapters live in infrastructure/dns-providers/.
//
// Expected failures are values, not exceptions, so a use case can tell "the token is wrong" (ask the
// user) from "the provider is rate limiting us" (retry later) without knowing which provider it is.

/** A zone (a domain the credentials can manage). `id` is the provider's handle, `name` the domain. */
export interface Zone {
  /** Cloudflare's zone id, PowerDNS's zone id (`example.com.`), the zone name for RFC 2136. */
  id: string
  /** Lower-case, without the trailing dot. */
  name: string
}

/**
 * An RRset: every record of one name and type (RFC 2181 §5). Writes replace the whole set, which is
 * what TXT-based policies need: two SPF records at one name are a permerror (RFC 7208 §4.5).
 */
export interface RecordSet {
  /** Fully qualified, lower-case, without the trailing dot (`_dmarc.example.com`). */
  name: string
  /** `TXT`, `CNAME`, `MX`, `A`, `AAAA` are writable (WRITABLE_TYPES); reads return every type. */
  type: string
  /** Seconds. Cloudflare reports `1` for "automatic". */
  ttl: number
  /**
   * One entry per record, in presentation form with absolute names written without the trailing
   * dot: `192.0.2.1`, `10 mx.example.com`, `target.example.net`. TXT values are the logical text —
   * the record's character-strings joined, unquoted and unescaped (RFC 7208 §3.3) — and adapters
   * split them into ≤255-byte strings on the way out (RFC 1035 §3.3.14).
   */
  values: string[]
}

export interface RecordFilter {
  /** FQDN, any case, trailing dot optional. */
  name?: string
  type?: string
}

export type ProviderErrorKind =
  /** The credentials are wrong, expired or revoked (HTTP 401, TSIG BADKEY/BADSIG, RCODE NOTAUTH). */
  | 'bad_credentials'
  /** The credentials are valid but may not do this (HTTP 403, RCODE REFUSED). */
  | 'forbidden'
  /** Slow down; `retryAfter` in seconds when the provider said (HTTP 429 Retry-After). */
  | 'rate_limited'
  /** The zone (or record) does not exist or the credentials cannot see it. */
  | 'not_found'
  /** The change collides with existing data (a CNAME beside other records, a duplicate record). */
  | 'conflict'
  /** The provider could not be reached or failed (network, timeout, HTTP 5xx, SERVFAIL). */
  | 'unavailable'
  /** The request was malformed or the provider rejected the data (HTTP 400/422, FORMERR). */
  | 'invalid'

export type ProviderError =
  | { kind: 'rate_limited'; message: string; retryAfter?: number }
  | { kind: Exclude<ProviderErrorKind, 'rate_limited'>; message: string }

/** Same shape as domain/shared/result.ts, with the provider's error in `failure`. */
export type ProviderResult<T> = { ok: true; value: T } | { ok: false; failure: ProviderError }

export interface DnsProvider {
  /** Which adapter this is (`cloudflare`, `powerdns`, `rfc2136`), for logs and messages. */
  readonly kind: string
  /** Checks the credentials with the cheapest call that needs them. */
  authenticate(): Promise<ProviderResult<{ account?: string }>>
  /** Every zone the credentials can manage (RFC 2136: the configured zones, it has no listing). */
  listZones(): Promise<ProviderResult<Zone[]>>
  /** The zone's record sets, optionally only those of one name and/or type. */
  readRecords(zone: Zone, filter?: RecordFilter): Promise<ProviderResult<RecordSet[]>>
  /** Replaces the whole set of `set.name`/`set.type` with `set.values` (creating it if absent). */
  upsertRecordSet(zone: Zone, set: RecordSet): Promise<ProviderResult<void>>
  /** Removes every record of that name and type; removing a set that does not exist succeeds. */
  deleteRecordSet(zone: Zone, name: string, type: string): Promise<ProviderResult<void>>
}

export const providerOk = <T>(value: T): ProviderResult<T> => ({ ok: true, value })

export function providerFail<T = never>(
  kind: ProviderErrorKind,
  message: string,
  retryAfter?: number,
): ProviderResult<T> {
  const failure: ProviderError =
    kind === 'rate_limited'
      ? { kind, message, ...(retryAfter === undefined ? {} : { retryAfter }) }
      : { kind, message }
  return { ok: false, failure }
}
