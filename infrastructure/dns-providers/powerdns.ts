// PowerDNS Authoritative through its HTTP API (https://doc.powerdns.com/authoritative/http-api/):
// `X-API-Key` authentication, zones under /api/v1/servers/<server>/zones, and record sets written
// with one PATCH per change (changetype REPLACE or DELETE), which PowerDNS applies atomically.

import { parseRetryAfter, providerErrorForStatus } from '../../domain/dns-providers/errors.ts'
import {
  type DnsProvider,
  type ProviderError,
  type ProviderResult,
  providerFail,
  providerOk,
  type RecordFilter,
  type RecordSet,
  type Zone,
} from '../../domain/dns-providers/ports.ts'
import {
  filterRecordSets,
  isInZone,
  normalizeName,
  parseMx,
  quoteTxt,
  sortRecordSets,
  unquoteTxt,
  validateRecordSet,
  withTrailingDot,
} from '../../domain/dns-providers/record-set.ts'
import type { HttpClient, OutboundResponse } from '../http/guarded-client.ts'
import { isObject, malformed, outboundFailure } from './provider-http.ts'

export interface PowerDnsOptions {
  /** The webserver's origin, e.g. `http://127.0.0.1:8081` (a trailing `/api/v1` is accepted too). */
  baseUrl: string
  apiKey: string
  /** The `server_id` of the URL; always `localhost` for the Authoritative server. */
  serverId?: string
  /** The guarded client with the provider limits (provider-http.ts): caps, deadlines, SSRF rules. */
  http: HttpClient
}

interface PdnsRrset {
  name: string
  type: string
  ttl: number
  records: { content: string; disabled?: boolean }[]
}

// Types whose content is one domain name, which PowerDNS writes absolute (with the dot).
const NAME_TYPES = new Set(['CNAME', 'NS', 'PTR', 'DNAME'])

// The failure branch has the shape of a failed ProviderResult, so it can be returned as one.
type Answer = { ok: true; body: unknown } | { ok: false; failure: ProviderError }

/** PowerDNS content → the port's value form (TXT unquoted, names without the trailing dot). */
function toValue(type: string, content: string): string {
  if (type === 'TXT' || type === 'SPF') return unquoteTxt(content)
  if (NAME_TYPES.has(type)) return normalizeName(content)
  if (type === 'MX') {
    const mx = parseMx(content)
    return mx ? `${mx.preference} ${mx.exchange}` : content
  }
  // The names inside SOA (mname, rname) and SRV (target) lose their dot as well.
  const fields = content.split(/\s+/)
  if (type === 'SOA' && fields.length === 7)
    return [...fields.slice(0, 2).map(normalizeName), ...fields.slice(2)].join(' ')
  if (type === 'SRV' && fields.length === 4)
    return [...fields.slice(0, 3), normalizeName(fields[3]!)].join(' ')
  return content
}

/** The port's value → PowerDNS content: TXT must be quoted, names absolute (API docs, "RRSet"). */
function toContent(type: string, value: string): string {
  if (type === 'TXT') return quoteTxt(value)
  if (type === 'CNAME') return withTrailingDot(value)
  if (type === 'MX') {
    const mx = parseMx(value)
    return mx ? `${mx.preference} ${mx.exchange === '.' ? '.' : withTrailingDot(mx.exchange)}` : value
  }
  return value
}

function isRrset(value: unknown): value is PdnsRrset {
  return (
    isObject(value) &&
    typeof value.name === 'string' &&
    typeof value.type === 'string' &&
    typeof value.ttl === 'number' &&
    Array.isArray(value.records) &&
    value.records.every((r) => isObject(r) && typeof r.content === 'string')
  )
}

function errorText(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') return body.error
  if (typeof body === 'string' && body.trim() !== '') return body.trim()
  return fallback
}

export function createPowerDnsProvider(options: PowerDnsOptions): DnsProvider {
  const base = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '')
  const server = `${base}/api/v1/servers/${encodeURIComponent(options.serverId ?? 'localhost')}`
  const label = `PowerDNS API at ${base}`

  async function request(method: string, path: string, body?: unknown): Promise<Answer> {
    let response: OutboundResponse
    try {
      response = await options.http.request(`${server}${path}`, {
        method,
        headers: {
          'X-API-Key': options.apiKey,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // The key is for this origin only: a redirect is a failure, never followed.
        redirect: 'error',
      })
    } catch (error) {
      return { ok: false, failure: outboundFailure(label, error) }
    }
    const text = response.text()
    let parsed: unknown = text
    let json = false
    if (text !== '') {
      try {
        parsed = JSON.parse(text)
        json = true
      } catch {
        parsed = text
      }
    }
    if (response.status >= 200 && response.status < 300) {
      // Every documented success is JSON, or empty (204 for a PATCH).
      if (!json && text !== '')
        return { ok: false, failure: malformed(label, `${method} ${path} is not JSON`) }
      return { ok: true, body: parsed }
    }
    // An answer that is not JSON (a proxy's or another server's HTML page) is not repeated: the
    // message is a sentence for the API's caller, not a page of markup.
    const reason = json ? errorText(parsed, '') : 'an answer that is not JSON (is base_url the PowerDNS API?)'
    const message = `PowerDNS ${method} ${path || '/'}: ${response.status} ${reason}`.trim()
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'), Date.now())
    const error = providerErrorForStatus(response.status, message, retryAfter)
    // PowerDNS reports a CNAME beside other data (RFC 2181 §10.1) as 422 "Conflicts with ...".
    if (response.status === 422 && /conflicts with/i.test(message)) error.kind = 'conflict'
    return { ok: false, failure: error }
  }

  const zonePath = (zone: Zone) => `/zones/${encodeURIComponent(zone.id)}`

  async function patch(zone: Zone, rrset: Record<string, unknown>): Promise<ProviderResult<void>> {
    const answer = await request('PATCH', zonePath(zone), { rrsets: [rrset] })
    return answer.ok ? providerOk(undefined) : answer
  }

  return {
    kind: 'powerdns',

    async authenticate() {
      // The server resource needs the key and nothing else: the cheapest authenticated call.
      const answer = await request('GET', '')
      if (!answer.ok) return answer
      // The server object (API docs, "Server"): anything else is not a PowerDNS API.
      if (
        !isObject(answer.body) ||
        typeof answer.body.id !== 'string' ||
        typeof answer.body.daemon_type !== 'string'
      )
        return { ok: false, failure: malformed(label, 'the server resource is not a PowerDNS server object') }
      return providerOk({})
    },

    async listZones() {
      const answer = await request('GET', '/zones')
      if (!answer.ok) return answer
      const zones = answer.body
      if (
        !Array.isArray(zones) ||
        !zones.every((z) => isObject(z) && typeof z.id === 'string' && typeof z.name === 'string')
      )
        return { ok: false, failure: malformed(label, '/zones is not a list of zones') }
      return providerOk(
        (zones as { id: string; name: string }[]).map((zone) => ({
          id: zone.id,
          name: normalizeName(zone.name),
        })),
      )
    },

    async readRecords(zone: Zone, filter: RecordFilter = {}) {
      // rrset_name/rrset_type narrow the answer on PowerDNS ≥ 4.7 (type only with a name); older
      // servers ignore them, so the sets are filtered here as well.
      const query = new URLSearchParams({ rrsets: 'true' })
      if (filter.name !== undefined) {
        query.set('rrset_name', withTrailingDot(normalizeName(filter.name)))
        if (filter.type !== undefined) query.set('rrset_type', filter.type.toUpperCase())
      }
      const answer = await request('GET', `${zonePath(zone)}?${query}`)
      if (!answer.ok) return answer
      if (!isObject(answer.body)) return { ok: false, failure: malformed(label, 'the zone is not an object') }
      const rrsets = answer.body.rrsets ?? []
      if (!Array.isArray(rrsets) || !rrsets.every(isRrset))
        return { ok: false, failure: malformed(label, 'the zone’s rrsets are not RRsets') }
      const sets: RecordSet[] = rrsets
        .map((rrset) => ({
          name: normalizeName(rrset.name),
          type: rrset.type,
          ttl: rrset.ttl,
          // A disabled record is not served, so it is not part of the published set.
          values: rrset.records.filter((r) => !r.disabled).map((r) => toValue(rrset.type, r.content)),
        }))
        .filter((set) => set.values.length > 0)
      return providerOk(sortRecordSets(filterRecordSets(sets, filter)))
    },

    async upsertRecordSet(zone: Zone, set: RecordSet) {
      const valid = validateRecordSet(zone.name, set)
      if (!valid.ok) return valid
      const { name, type, ttl, values } = valid.value
      return patch(zone, {
        name: withTrailingDot(name),
        type,
        ttl,
        changetype: 'REPLACE',
        records: values.map((value) => ({ content: toContent(type, value), disabled: false })),
      })
    },

    async deleteRecordSet(zone: Zone, rawName: string, rawType: string) {
      const name = normalizeName(rawName)
      if (!isInZone(name, zone.name)) return providerFail('invalid', `${name} is not in zone ${zone.name}`)
      return patch(zone, { name: withTrailingDot(name), type: rawType.toUpperCase(), changetype: 'DELETE' })
    },
  }
}
