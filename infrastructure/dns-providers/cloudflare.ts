// Cloudflare through its API v4 (https://developers.cloudflare.com/api/) with an API token, called
// directly through the guarded client (docs/outbound-http.md; why not the SDK: docs/decisions.md).
// Cloudflare stores records one by one, not as sets, so replacing a set is a diff applied in one
// batch request (POST /zones/:id/dns_records/batch), which Cloudflare runs in one database
// transaction: all of it or none. Its edge still propagates each record on its own, so the diff
// rewrites records in place where it can: replacing a one-record SPF set is one PATCH, and no
// resolver ever sees two SPF records or none.

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
} from '../../domain/dns-providers/record-set.ts'
import type { HttpClient, OutboundResponse } from '../http/guarded-client.ts'
import { isObject, malformed, outboundFailure } from './provider-http.ts'

export interface CloudflareOptions {
  apiToken: string
  /** The API base (default `https://api.cloudflare.com/client/v4`), e.g. a proxy or a test server. */
  baseUrl?: string
  /** Set for account-owned tokens, which are verified under the account instead of the user. */
  accountId?: string
  /** The guarded client with the provider limits (provider-http.ts). No retries here: the job
   * queue retries, with its backoff. */
  http: HttpClient
  /** DNS records per list page (default 500). */
  recordsPerPage?: number
}

/** A DNS record as the API returns it (the fields this adapter reads). */
interface CfRecord {
  id: string
  name: string
  type: string
  content?: string
  ttl: number
  priority?: number | null
}

/** The API v4 envelope (the fields read here); `result` is checked where it is used. */
interface Envelope {
  success: true
  result: unknown
  result_info?: unknown
}

// Cloudflare caps zone pages at 50; record pages may be larger, 500 keeps answers moderate.
const ZONES_PER_PAGE = 50
const RECORDS_PER_PAGE = 500
const MAX_PAGES = 1000
// Cloudflare API v4 error codes (in the `errors` array) that say more than the HTTP status.
const BAD_CREDENTIALS = new Set([1000, 6003, 6111]) // invalid token; malformed Authorization header
const NOT_FOUND = new Set([7003, 81044]) // unknown zone identifier in the path; record does not exist
const CONFLICT = new Set([81053, 81054, 81055, 81056, 81057, 81058]) // CNAME clashes; duplicate record
// The record types the list endpoint filters by; any other filter is applied here.
const LISTABLE_TYPES = new Set([
  'A',
  'AAAA',
  'CAA',
  'CNAME',
  'MX',
  'NS',
  'PTR',
  'SRV',
  'TXT',
  'HTTPS',
  'SVCB',
])

/** A failed call's answer, thrown inside an operation and turned into its result by attempt(). */
class Failed extends Error {
  constructor(readonly failure: ProviderError) {
    super(failure.message)
  }
}

async function attempt<T>(run: () => Promise<ProviderResult<T>>): Promise<ProviderResult<T>> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof Failed) return { ok: false, failure: error.failure }
    throw error
  }
}

/** The v4 envelope's error list (`errors: [{code, message}]`), whatever else the body holds. */
function apiErrors(body: unknown): { code: number; message: string }[] {
  if (!isObject(body) || !Array.isArray(body.errors)) return []
  return body.errors.filter(isObject).map((e) => ({
    code: typeof e.code === 'number' ? e.code : 0,
    message: typeof e.message === 'string' ? e.message.slice(0, 200) : '',
  }))
}

/** A non-2xx answer (or `success: false`) as the port's error, refined by Cloudflare's codes. */
function statusFailure(response: OutboundResponse, body: unknown): ProviderError {
  const errors = apiErrors(body)
  const codes = errors.map((e) => e.code)
  const detail = errors.map((e) => `${e.code} ${e.message}`).join('; ') || 'no error detail'
  const status = response.status >= 200 && response.status < 300 ? 400 : response.status
  const message = `Cloudflare: ${response.status} ${detail}`
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), Date.now())
  const mapped = providerErrorForStatus(status, message, retryAfter)
  if (status < 500 && status !== 429) {
    if (codes.some((c) => BAD_CREDENTIALS.has(c))) mapped.kind = 'bad_credentials'
    else if (codes.some((c) => CONFLICT.has(c))) mapped.kind = 'conflict'
    else if (codes.some((c) => NOT_FOUND.has(c))) mapped.kind = 'not_found'
  }
  return mapped
}

const isRecord = (value: unknown): value is CfRecord =>
  isObject(value) &&
  typeof value.id === 'string' &&
  typeof value.name === 'string' &&
  typeof value.type === 'string' &&
  typeof value.ttl === 'number' &&
  (value.content === undefined || typeof value.content === 'string') &&
  (value.priority === undefined || value.priority === null || typeof value.priority === 'number')

const isZone = (value: unknown): value is { id: string; name: string } =>
  isObject(value) && typeof value.id === 'string' && typeof value.name === 'string'

/** The port's value of a record: TXT unquoted, MX as `priority exchange`, names without the dot. */
function toValue(record: CfRecord): string {
  const content = record.content ?? ''
  if (record.type === 'TXT') return unquoteTxt(content)
  if (record.type === 'MX') return `${record.priority ?? 0} ${normalizeName(content)}`
  if (['CNAME', 'NS', 'PTR'].includes(record.type)) return normalizeName(content)
  return content
}

/** The API's fields for a value: TXT quoted and split (Cloudflare docs), MX priority apart. */
function toFields(type: string, value: string): { content: string; priority?: number } {
  if (type === 'TXT') return { content: quoteTxt(value) }
  if (type === 'MX') {
    const mx = parseMx(value)!
    return { content: mx.exchange, priority: mx.preference }
  }
  return { content: value }
}

export function createCloudflareProvider(options: CloudflareOptions): DnsProvider {
  const base = (options.baseUrl ?? 'https://api.cloudflare.com/client/v4').replace(/\/+$/, '')
  const label = `Cloudflare API at ${new URL(base).origin}`
  const recordsPerPage = options.recordsPerPage ?? RECORDS_PER_PAGE

  /** One call: the envelope's `result` when `success`, else the failure (thrown as Failed). */
  async function call(method: string, path: string, body?: unknown): Promise<Envelope> {
    let response: OutboundResponse
    try {
      response = await options.http.request(`${base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.apiToken}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // The token is for this origin only: a redirect is a failure, never followed.
        redirect: 'error',
      })
    } catch (error) {
      throw new Failed(outboundFailure(label, error))
    }
    let parsed: unknown
    try {
      parsed = response.json()
    } catch {
      parsed = undefined
    }
    const ok = response.status >= 200 && response.status < 300
    if (!ok) throw new Failed(statusFailure(response, parsed))
    if (!isObject(parsed)) throw new Failed(malformed(label, `${method} ${path} is not a JSON object`))
    if (parsed.success !== true) {
      if (parsed.success === false) throw new Failed(statusFailure(response, parsed))
      throw new Failed(malformed(label, `${method} ${path} has no "success"`))
    }
    return parsed as unknown as Envelope
  }

  /** All pages of a list, stopping at the last page Cloudflare reports rather than at an empty one. */
  async function allPages<T>(
    path: string,
    query: Record<string, string>,
    perPage: number,
    valid: (value: unknown) => value is T,
  ): Promise<T[]> {
    const items: T[] = []
    for (let page = 1; page <= MAX_PAGES; page++) {
      const search = new URLSearchParams({ ...query, page: String(page), per_page: String(perPage) })
      const envelope = await call('GET', `${path}?${search}`)
      const result = envelope.result
      if (!Array.isArray(result) || !result.every(valid))
        throw new Failed(malformed(label, `GET ${path} has no list of the expected items in "result"`))
      items.push(...result)
      const info = isObject(envelope.result_info) ? envelope.result_info : {}
      const totalPages = typeof info.total_pages === 'number' ? info.total_pages : undefined
      const last = totalPages !== undefined ? page >= totalPages : result.length < perPage
      if (last || result.length === 0) break
    }
    return items
  }

  async function listRecords(zone: Zone, filter: RecordFilter): Promise<CfRecord[]> {
    const type = filter.type?.toUpperCase()
    const query: Record<string, string> = {
      ...(filter.name === undefined ? {} : { 'name.exact': normalizeName(filter.name) }),
      ...(type && LISTABLE_TYPES.has(type) ? { type } : {}),
    }
    const records = await allPages(
      `/zones/${encodeURIComponent(zone.id)}/dns_records`,
      query,
      recordsPerPage,
      isRecord,
    )
    // Filtered here too: the API cannot filter every type, and an unfiltered list must never reach
    // a delete.
    const name = filter.name === undefined ? undefined : normalizeName(filter.name)
    return records.filter((r) => (!type || r.type === type) && (!name || normalizeName(r.name) === name))
  }

  const batch = (zone: Zone, changes: Record<string, unknown>) =>
    call('POST', `/zones/${encodeURIComponent(zone.id)}/dns_records/batch`, changes)

  return {
    kind: 'cloudflare',

    authenticate: () =>
      attempt(async () => {
        const path = options.accountId
          ? `/accounts/${encodeURIComponent(options.accountId)}/tokens/verify`
          : '/user/tokens/verify'
        const token = (await call('GET', path)).result
        if (!isObject(token) || typeof token.status !== 'string')
          return { ok: false, failure: malformed(label, `GET ${path} has no token in "result"`) }
        if (token.status !== 'active')
          return providerFail('bad_credentials', `the API token is ${token.status}`)
        return providerOk(options.accountId ? { account: options.accountId } : {})
      }),

    listZones: () =>
      attempt(async () => {
        const zones = await allPages('/zones', {}, ZONES_PER_PAGE, isZone)
        return providerOk(zones.map((zone) => ({ id: zone.id, name: normalizeName(zone.name) })))
      }),

    readRecords: (zone: Zone, filter: RecordFilter = {}) =>
      attempt(async () => {
        const sets = new Map<string, RecordSet>()
        for (const record of await listRecords(zone, filter)) {
          const name = normalizeName(record.name)
          const key = `${name} ${record.type}`
          const set = sets.get(key) ?? { name, type: record.type, ttl: record.ttl, values: [] }
          set.values.push(toValue(record))
          sets.set(key, set)
        }
        return providerOk(sortRecordSets(filterRecordSets([...sets.values()], filter)))
      }),

    upsertRecordSet: (zone: Zone, set: RecordSet) =>
      attempt(async () => {
        const valid = validateRecordSet(zone.name, set)
        if (!valid.ok) return valid
        const { name, type, ttl, values } = valid.value
        const existing = await listRecords(zone, { name, type })
        // Records that already hold a wanted value stay (their TTL is patched if it differs); the
        // rest are rewritten in place, and only the surplus is created or deleted.
        const wanted = [...values]
        const spare: CfRecord[] = []
        const patches: Record<string, unknown>[] = []
        for (const record of existing) {
          const index = wanted.indexOf(toValue(record))
          if (index < 0) spare.push(record)
          else {
            wanted.splice(index, 1)
            if (record.ttl !== ttl)
              patches.push({ id: record.id, name, type, ttl, ...toFields(type, toValue(record)) })
          }
        }
        const posts: Record<string, unknown>[] = []
        for (const value of wanted) {
          const record = spare.shift()
          if (record) patches.push({ id: record.id, name, type, ttl, ...toFields(type, value) })
          else posts.push({ name, type, ttl, ...toFields(type, value) })
        }
        const deletes = spare.map((record) => ({ id: record.id }))
        if (patches.length + posts.length + deletes.length === 0) return providerOk(undefined)
        await batch(zone, { deletes, patches, posts })
        return providerOk(undefined)
      }),

    deleteRecordSet: (zone: Zone, rawName: string, rawType: string) =>
      attempt(async () => {
        const name = normalizeName(rawName)
        if (!isInZone(name, zone.name)) return providerFail('invalid', `${name} is not in zone ${zone.name}`)
        const existing = await listRecords(zone, { name, type: rawType })
        if (existing.length === 0) return providerOk(undefined)
        await batch(zone, { deletes: existing.map((r) => ({ id: r.id })) })
        return providerOk(undefined)
      }),
  }
}
