// Cloudflare through its official SDK (`cloudflare`, API v4) with an API token. Cloudflare stores
// records one by one, not as sets, so replacing a set is a diff applied in one batch request
// (POST /zones/:id/dns_records/batch), which Cloudflare runs in one database transaction: all of it
// or none. Its edge still propagates each record on its own, so the diff rewrites records in place
// where it can: replacing a one-record SPF set is one PATCH, and no resolver ever sees two SPF
// records or none.

import Cloudflare from 'cloudflare'
import { parseRetryAfter, providerErrorForStatus } from '../../domain/dns-providers/errors.ts'
import {
  type DnsProvider,
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

export interface CloudflareOptions {
  apiToken: string
  /** The API base (default `https://api.cloudflare.com/client/v4`), e.g. a proxy or a test server. */
  baseUrl?: string
  /** Set for account-owned tokens, which are verified under the account instead of the user. */
  accountId?: string
  /** Per request, in milliseconds (default 10000). */
  timeoutMs?: number
  /** SDK retries of 429/5xx/network errors (default 0: the job queue retries, with our backoff). */
  maxRetries?: number
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
  priority?: number
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

function failure(error: unknown): ProviderResult<never> {
  if (error instanceof Cloudflare.APIConnectionError) {
    return providerFail('unavailable', `Cloudflare API unreachable: ${error.message}`)
  }
  if (!(error instanceof Cloudflare.APIError) || error.status === undefined) throw error
  const codes = error.errors.map((e) => e.code ?? 0)
  const detail = error.errors.map((e) => `${e.code} ${e.message}`).join('; ') || error.message
  const message = `Cloudflare: ${error.status} ${detail}`
  const retryAfter = parseRetryAfter(error.headers?.get('retry-after'), Date.now())
  const mapped = providerErrorForStatus(error.status, message, retryAfter)
  if (error.status < 500 && error.status !== 429) {
    if (codes.some((c) => BAD_CREDENTIALS.has(c))) mapped.kind = 'bad_credentials'
    else if (codes.some((c) => CONFLICT.has(c))) mapped.kind = 'conflict'
    else if (codes.some((c) => NOT_FOUND.has(c))) mapped.kind = 'not_found'
  }
  return { ok: false, failure: mapped }
}

async function attempt<T>(run: () => Promise<ProviderResult<T>>): Promise<ProviderResult<T>> {
  try {
    return await run()
  } catch (error) {
    return failure(error)
  }
}

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

/** All pages of a list, stopping at the last page Cloudflare reports rather than at an empty one. */
async function allPages<T>(
  first: Promise<{ result: T[]; result_info: object }>,
  perPage: number,
  next: (page: number) => Promise<{ result: T[]; result_info: object }>,
): Promise<T[]> {
  const items: T[] = []
  let response = await first
  for (let page = 1; page <= MAX_PAGES; page++) {
    items.push(...response.result)
    const info = response.result_info as { total_pages?: number }
    const last = info.total_pages !== undefined ? page >= info.total_pages : response.result.length < perPage
    if (last || response.result.length === 0) break
    response = await next(page + 1)
  }
  return items
}

export function createCloudflareProvider(options: CloudflareOptions): DnsProvider {
  const client = new Cloudflare({
    apiToken: options.apiToken,
    baseURL: options.baseUrl ?? 'https://api.cloudflare.com/client/v4',
    timeout: options.timeoutMs ?? 10_000,
    maxRetries: options.maxRetries ?? 0,
  })

  const recordsPerPage = options.recordsPerPage ?? RECORDS_PER_PAGE

  async function listRecords(zone: Zone, filter: RecordFilter): Promise<CfRecord[]> {
    const type = filter.type?.toUpperCase()
    const query = (page: number) =>
      client.dns.records.list({
        zone_id: zone.id,
        page,
        per_page: recordsPerPage,
        ...(filter.name === undefined ? {} : { name: { exact: normalizeName(filter.name) } }),
        ...(type && LISTABLE_TYPES.has(type) ? { type: type as 'TXT' } : {}),
      }) as unknown as Promise<{ result: CfRecord[]; result_info: object }>
    const records = await allPages(query(1), recordsPerPage, query)
    // Filtered here too: the API cannot filter every type, and an unfiltered list must never reach
    // a delete.
    const name = filter.name === undefined ? undefined : normalizeName(filter.name)
    return records.filter((r) => (!type || r.type === type) && (!name || normalizeName(r.name) === name))
  }

  return {
    kind: 'cloudflare',

    authenticate: () =>
      attempt(async () => {
        const token = options.accountId
          ? await client.accounts.tokens.verify({ account_id: options.accountId })
          : await client.user.tokens.verify()
        if (token.status !== 'active')
          return providerFail('bad_credentials', `the API token is ${token.status}`)
        return providerOk(options.accountId ? { account: options.accountId } : {})
      }),

    listZones: () =>
      attempt(async () => {
        const query = (page: number) => client.zones.list({ page, per_page: ZONES_PER_PAGE })
        const zones = await allPages(query(1), ZONES_PER_PAGE, query)
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
        await client.dns.records.batch({ zone_id: zone.id, deletes, patches, posts } as never)
        return providerOk(undefined)
      }),

    deleteRecordSet: (zone: Zone, rawName: string, rawType: string) =>
      attempt(async () => {
        const name = normalizeName(rawName)
        if (!isInZone(name, zone.name)) return providerFail('invalid', `${name} is not in zone ${zone.name}`)
        const existing = await listRecords(zone, { name, type: rawType })
        if (existing.length === 0) return providerOk(undefined)
        await client.dns.records.batch({ zone_id: zone.id, deletes: existing.map((r) => ({ id: r.id })) })
        return providerOk(undefined)
      }),
  }
}
