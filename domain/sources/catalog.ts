// The sending-service catalog: which provider a source IP belongs to, judged from the names and
// ranges providers document for their customers (SPF includes, PTR host names, DKIM d= domains,
// published networks). The JSON is ours and versioned; it is validated strictly on load so that a
// typo in a new entry fails the test suite instead of silently classifying nothing.

import { formatIp, parseIp, unmapIpv4 } from '../spf/ip.ts'
import { findOverlaps, formatNetwork, type Network, network } from '../spf/networks.ts'
import catalogJson from './sending-services.json' with { type: 'json' }

export const SERVICE_CATEGORIES = [
  'email_platform',
  'mailbox_provider',
  'transactional',
  'marketing',
  'crm',
  'helpdesk',
  'hosting',
  'security_gateway',
  'forwarder',
] as const

export type ServiceCategory = (typeof SERVICE_CATEGORIES)[number]

export interface SendingService {
  /** Stable snake_case key; stored with user overrides, so never renamed. */
  readonly id: string
  readonly name: string
  readonly category: ServiceCategory
  /** The provider's SPF/DKIM setup documentation (https). */
  readonly docs: string
  /** Names customers put in `include:` (RFC 7208 §5.2), matched exactly. */
  readonly spfIncludes: readonly string[]
  /** Domains whose subdomains name the provider's outbound hosts (PTR), matched on label boundaries. */
  readonly ptrSuffixes: readonly string[]
  /** DKIM signing domains (`d=`, RFC 6376 §3.5) the provider uses by default, matched on label boundaries. */
  readonly dkimDomains: readonly string[]
  /** Documented, stable outbound ranges in canonical CIDR form. */
  readonly networks: readonly string[]
  /** Typical selectors, for display and DKIM probing; never used as evidence (anyone can pick `s1`). */
  readonly dkimSelectors: readonly string[]
  /** Mailing lists and forwarding services: their mail is someone else's, re-sent. */
  readonly forwarder: boolean
  /** The service whose infrastructure this one sends through (Google Groups runs on Google's). */
  readonly runsOn: string | null
}

export interface Catalog {
  readonly version: string
  readonly services: readonly SendingService[]
}

const ID = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/
// Lower-case DNS names of two or more labels; `_` is allowed because SPF names use it (`_spf`).
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const SELECTOR = /^[a-z0-9_][a-z0-9_.-]{0,62}$/
const LIST_FIELDS = ['spf_includes', 'ptr_suffixes', 'dkim_domains', 'networks'] as const
const KNOWN_FIELDS = new Set([
  'id',
  'name',
  'category',
  'docs',
  ...LIST_FIELDS,
  'dkim_selectors',
  'forwarder',
  'runs_on',
])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function fail(where: string, message: string): never {
  throw new Error(`sending-service catalog: ${where}: ${message}`)
}

/** `a.b.c.d/nn` or `x:y::/nn`, host bits clear, written the way `formatIp` writes it. */
export function parseCidr(text: string): Network | null {
  const slash = text.indexOf('/')
  if (slash === -1) return null
  const address = parseIp(text.slice(0, slash))
  const prefixText = text.slice(slash + 1)
  if (address === null || !/^\d{1,3}$/.test(prefixText)) return null
  const prefix = Number(prefixText)
  if (prefix > address.bytes.length * 8) return null
  const canonical = network(address, prefix)
  return formatNetwork(canonical).split('/')[0] === text.slice(0, slash) ? canonical : null
}

const NAME_RULE = 'is not a lower-case DNS name of two or more labels without a trailing dot'

function stringList(
  raw: Record<string, unknown>,
  field: string,
  where: string,
  pattern: RegExp,
  rule = NAME_RULE,
): string[] {
  const value = raw[field] ?? []
  if (!Array.isArray(value)) fail(where, `${field} must be an array`)
  return value.map((item, i) => {
    if (typeof item !== 'string' || !pattern.test(item)) {
      fail(where, `${field}[${i}] ${JSON.stringify(item)} ${rule}`)
    }
    return item
  })
}

function parseService(raw: unknown, position: number): SendingService {
  if (!isObject(raw)) fail(`services[${position}]`, 'must be an object')
  const id = raw.id
  if (typeof id !== 'string' || !ID.test(id)) fail(`services[${position}]`, 'id must be snake_case')
  const where = `service "${id}"`
  for (const key of Object.keys(raw)) if (!KNOWN_FIELDS.has(key)) fail(where, `unknown field ${key}`)
  if (typeof raw.name !== 'string' || raw.name.trim() === '') fail(where, 'name must be a non-empty string')
  const category = raw.category
  if (!SERVICE_CATEGORIES.some((known) => known === category)) {
    fail(where, `category ${JSON.stringify(category)} is not one of ${SERVICE_CATEGORIES.join(', ')}`)
  }
  if (typeof raw.docs !== 'string' || !raw.docs.startsWith('https://') || !URL.canParse(raw.docs)) {
    fail(where, 'docs must be an https URL')
  }
  for (const field of LIST_FIELDS) {
    if (!Array.isArray(raw[field])) fail(where, `${field} must be an array (empty when unknown)`)
  }
  const networks = stringList(raw, 'networks', where, /^[0-9a-f.:]+\/\d{1,3}$/, 'is not a CIDR network')
  for (const [i, cidr] of networks.entries()) {
    if (parseCidr(cidr) === null) fail(where, `networks[${i}] "${cidr}" is not a canonical CIDR network`)
  }
  const forwarder = raw.forwarder ?? false
  if (typeof forwarder !== 'boolean') fail(where, 'forwarder must be a boolean')
  if (category === 'forwarder' && !forwarder) fail(where, 'category forwarder needs forwarder: true')
  const runsOn = raw.runs_on ?? null
  if (runsOn !== null && typeof runsOn !== 'string') fail(where, 'runs_on must be a service id')
  const service: SendingService = {
    id,
    name: raw.name,
    category: category as ServiceCategory,
    docs: raw.docs,
    spfIncludes: stringList(raw, 'spf_includes', where, DOMAIN),
    ptrSuffixes: stringList(raw, 'ptr_suffixes', where, DOMAIN),
    dkimDomains: stringList(raw, 'dkim_domains', where, DOMAIN),
    networks,
    dkimSelectors: stringList(raw, 'dkim_selectors', where, SELECTOR, 'is not a lower-case selector'),
    forwarder,
    runsOn,
  }
  if (LIST_FIELDS.every((field) => (raw[field] as unknown[]).length === 0)) {
    fail(where, `needs at least one of ${LIST_FIELDS.join(', ')}`)
  }
  return service
}

/** One name may identify one service only, or classification would depend on catalog order. */
function checkUnique(services: readonly SendingService[]) {
  const claims: [string, (s: SendingService) => readonly string[]][] = [
    ['spf_includes', (s) => s.spfIncludes],
    ['ptr_suffixes', (s) => s.ptrSuffixes],
    ['dkim_domains', (s) => s.dkimDomains],
  ]
  for (const [field, valuesOf] of claims) {
    const owner = new Map<string, string>()
    for (const service of services) {
      for (const value of valuesOf(service)) {
        const previous = owner.get(value)
        if (previous !== undefined) {
          fail(`service "${service.id}"`, `${field} "${value}" is already claimed by service "${previous}"`)
        }
        owner.set(value, service.id)
      }
    }
  }
  const ranges = services.flatMap((service) =>
    service.networks.map((cidr) => ({ service: service.id, cidr, net: parseCidr(cidr)! })),
  )
  const [overlap] = findOverlaps(ranges, (range) => range.net)
  if (overlap !== undefined) {
    const { item, within } = overlap
    fail(
      `service "${item.service}"`,
      `network ${item.cidr} overlaps ${within.cidr} of service "${within.service}"`,
    )
  }
}

/** Validates the shape and invariants of a catalog document; throws naming the service and field. */
export function loadCatalog(json: unknown): Catalog {
  if (!isObject(json)) fail('document', 'must be an object with version and services')
  if (typeof json.version !== 'string' || json.version === '') fail('document', 'version must be a string')
  if (!Array.isArray(json.services)) fail('document', 'services must be an array')
  const services = json.services.map(parseService)
  const ids = new Set<string>()
  for (const service of services) {
    if (ids.has(service.id)) fail(`service "${service.id}"`, 'id is used twice')
    ids.add(service.id)
  }
  for (const service of services) {
    if (service.runsOn === null) continue
    const base = services.find((other) => other.id === service.runsOn)
    if (base === undefined || base === service) {
      fail(`service "${service.id}"`, `runs_on "${service.runsOn}" is not another service of the catalog`)
    }
    // One level only: "S runs on P" then means exactly "P's evidence is S's evidence too".
    if (base.runsOn !== null)
      fail(`service "${service.id}"`, `runs_on "${base.id}", which itself runs on another`)
  }
  checkUnique(services)
  return { version: json.version, services }
}

export interface CatalogMatch {
  readonly service: SendingService
  /** The catalog entry that matched: the suffix, include, d= domain or CIDR. */
  readonly entry: string
}

export interface CatalogIndex {
  readonly catalog: Catalog
  readonly services: ReadonlyMap<string, SendingService>
  readonly spfIncludes: ReadonlyMap<string, CatalogMatch>
  readonly ptrSuffixes: ReadonlyMap<string, CatalogMatch>
  readonly dkimDomains: ReadonlyMap<string, CatalogMatch>
  /** One table per (family, prefix length), longest prefixes first: a lookup masks once per table. */
  readonly networks: readonly { family: 4 | 6; prefix: number; entries: ReadonlyMap<string, CatalogMatch> }[]
}

export function indexCatalog(catalog: Catalog): CatalogIndex {
  const services = new Map(catalog.services.map((service) => [service.id, service]))
  const byName = (valuesOf: (s: SendingService) => readonly string[]) =>
    new Map(
      catalog.services.flatMap((service) => valuesOf(service).map((entry) => [entry, { service, entry }])),
    )
  const tables = new Map<string, { family: 4 | 6; prefix: number; entries: Map<string, CatalogMatch> }>()
  for (const service of catalog.services) {
    for (const entry of service.networks) {
      const net = parseCidr(entry)!
      const key = `${net.address.family}/${net.prefix}`
      const table = tables.get(key) ?? { family: net.address.family, prefix: net.prefix, entries: new Map() }
      table.entries.set(formatIp(net.address), { service, entry })
      tables.set(key, table)
    }
  }
  return {
    catalog,
    services,
    spfIncludes: byName((s) => s.spfIncludes),
    ptrSuffixes: byName((s) => s.ptrSuffixes),
    dkimDomains: byName((s) => s.dkimDomains),
    networks: [...tables.values()].sort((a, b) => b.prefix - a.prefix || a.family - b.family),
  }
}

/** DNS names compare case-insensitively (RFC 4343); the root's trailing dot is not part of the name. */
export function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase()
  return lower.endsWith('.') ? lower.slice(0, -1) : lower
}

/** The most specific suffix entry of `name` (itself included), on whole labels only. */
function matchSuffix(table: ReadonlyMap<string, CatalogMatch>, name: string): CatalogMatch | null {
  const labels = normalizeName(name).split('.')
  for (let i = 0; i < labels.length; i++) {
    const found = table.get(labels.slice(i).join('.'))
    if (found !== undefined) return found
  }
  return null
}

/** `mail-ot1-f41.google.com` → Google; `mail.evilsendgrid.net` matches nothing. */
export const matchPtr = (index: CatalogIndex, ptr: string) => matchSuffix(index.ptrSuffixes, ptr)

/** `d=em.sendgrid.net` → SendGrid (the signer controls that zone, RFC 6376 §3.5). */
export const matchDkimDomain = (index: CatalogIndex, domain: string) => matchSuffix(index.dkimDomains, domain)

/** Exact: an include names one provider's record (RFC 7208 §5.2); a sibling name may be someone else's. */
export const matchSpfInclude = (index: CatalogIndex, include: string): CatalogMatch | null =>
  index.spfIncludes.get(normalizeName(include)) ?? null

/** The service whose documented network holds `ip` (IPv4-mapped IPv6 counts as IPv4). */
export function matchNetwork(index: CatalogIndex, ip: string): CatalogMatch | null {
  const parsed = parseIp(ip.trim())
  if (parsed === null) return null
  const address = unmapIpv4(parsed)
  for (const table of index.networks) {
    if (table.family !== address.family) continue
    const found = table.entries.get(formatIp(network(address, table.prefix).address))
    if (found !== undefined) return found
  }
  return null
}

/** The catalog shipped with the service, validated and indexed once at import. */
export const SHIPPED_CATALOG_INDEX: CatalogIndex = indexCatalog(loadCatalog(catalogJson))
