// DNS provider connections (issue #7): authenticate and store, list, delete, find a connection by
// kind or id, and find which connected zone holds a domain. Writes are in writes.ts, imports in
// imports.ts. Credentials only travel inward: the store seals them and nothing here returns them.

import type { Page, PageRequest } from '../shared/pagination.ts'
import { type Failure, fail, invalid, ok, type Result } from '../shared/result.ts'
import { isUuid } from '../shared/uuid.ts'
import {
  type ParsedCredentials,
  PROVIDER_KINDS,
  type ProviderKind,
  type ProviderSettings,
  parseCredentials,
} from './credentials.ts'
import type { DnsProvider, ProviderError, ProviderErrorKind, ProviderResult, Zone } from './ports.ts'
import { isInZone, normalizeName } from './record-set.ts'

export interface Connection {
  id: string
  accountId: string
  provider: ProviderKind
  name: string
  settings: ProviderSettings
  /** Who the provider says the credentials belong to, when it says. */
  providerAccount: string | null
  createdAt: Date
  lastVerifiedAt: Date
}

export interface NewConnection extends ParsedCredentials {
  name: string
  providerAccount: string | null
  now: Date
}

/** Every method is scoped by account: another account's connection is indistinguishable from none. */
export interface ConnectionStore {
  insert(accountId: string, connection: NewConnection): Promise<Connection>
  list(accountId: string, page: PageRequest): Promise<Page<Connection>>
  /** Every connection of the account, oldest first. */
  all(accountId: string): Promise<Connection[]>
  get(accountId: string, id: string): Promise<Connection | null>
  remove(accountId: string, id: string): Promise<boolean>
}

/** The adapter for settings and a secret; `invalid` when the endpoint is not allowed (SSRF guard). */
export type BuildProvider = (
  settings: ProviderSettings,
  secret: string,
) => Promise<ProviderResult<DnsProvider>>
/** The adapter of a stored connection, its secret opened. */
export type OpenProvider = (connection: Connection) => Promise<ProviderResult<DnsProvider>>

/**
 * A provider that failed (unreachable, rate limiting, refusing the data): the API reference names no code of its own
 * for it, so the API answers 502 `dns_provider_error` (docs/api.md). Bad credentials are not this:
 * they are the 400 `dns_provider_authentication_failed`.
 */
export interface ProviderProblem {
  code: 'dns_provider_error'
  provider: ProviderKind
  kind: ProviderErrorKind
  message: string
  retryAfter?: number
  /** The write that failed, when one was recorded. */
  writeId?: string
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: Failure | ProviderProblem }

export const LABELS: Record<ProviderKind, string> = {
  powerdns: 'PowerDNS',
  cloudflare: 'Cloudflare',
  rfc2136: 'RFC 2136 server',
}

/** A provider's error as the API's failure: credentials → 400, the rest → 502. */
export function providerFailure(provider: ProviderKind, error: ProviderError): Failure | ProviderProblem {
  if (error.kind === 'bad_credentials' || error.kind === 'forbidden')
    return { code: 'dns_provider_authentication_failed', provider }
  return {
    code: 'dns_provider_error',
    provider,
    kind: error.kind,
    message: `${LABELS[provider]}: ${error.message}`,
    ...(error.kind === 'rate_limited' && error.retryAfter !== undefined
      ? { retryAfter: error.retryAfter }
      : {}),
  }
}

const MAX_NAME = 100

function defaultName(settings: ProviderSettings): string {
  const host = (url: string) => url.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '')
  switch (settings.provider) {
    case 'powerdns':
      return `PowerDNS ${host(settings.base_url)}`
    case 'cloudflare':
      return settings.account_id ? `Cloudflare ${settings.account_id}` : 'Cloudflare'
    case 'rfc2136':
      return `RFC 2136 ${settings.server}`
  }
}

/** Checks the credentials against the provider, then stores the connection (the secret sealed). */
export async function authenticateProvider(
  deps: { connections: ConnectionStore; build: BuildProvider; now: () => Date },
  input: { accountId: string; provider: ProviderKind; name?: string; credentials: Record<string, unknown> },
): Promise<Outcome<Connection>> {
  const parsed = parseCredentials(input.provider, input.credentials)
  if (!parsed.ok) return parsed
  const name = input.name?.trim().replace(/\s+/g, ' ') || defaultName(parsed.value.settings)
  if (name.length > MAX_NAME) return invalid('name', `The name must be at most ${MAX_NAME} characters.`)
  const built = await deps.build(parsed.value.settings, parsed.value.secret)
  if (!built.ok) {
    const field = input.provider === 'rfc2136' ? 'credentials.server' : 'credentials.base_url'
    return invalid(field, built.failure.message)
  }
  const checked = await built.value.authenticate()
  if (!checked.ok) {
    const { kind, message } = checked.failure
    // A refused zone or server id is a wrong setting, not a provider outage.
    if (kind === 'not_found' || kind === 'invalid')
      return invalid('credentials', `${LABELS[input.provider]}: ${message}`)
    return { ok: false, failure: providerFailure(input.provider, checked.failure) }
  }
  const connection = await deps.connections.insert(input.accountId, {
    ...parsed.value,
    name,
    providerAccount: checked.value.account ?? null,
    now: deps.now(),
  })
  return ok(connection)
}

export const connectionNotFound = () => fail<never>({ code: 'not_found', resource: 'provider' })

/**
 * `{provider}` in a path: a connection id, or a provider kind when the account has exactly one
 * connection of that kind (with two, the kind is ambiguous and the id is needed).
 */
export async function resolveConnection(
  deps: { connections: ConnectionStore },
  accountId: string,
  ref: string,
): Promise<Result<Connection>> {
  if (isUuid(ref)) {
    const found = await deps.connections.get(accountId, ref.toLowerCase())
    return found === null ? connectionNotFound() : ok(found)
  }
  const kind = ref.toLowerCase()
  if (!(PROVIDER_KINDS as readonly string[]).includes(kind)) return connectionNotFound()
  const matching = (await deps.connections.all(accountId)).filter((c) => c.provider === kind)
  if (matching.length === 0) return connectionNotFound()
  if (matching.length > 1)
    return invalid(
      'provider',
      `Your account has ${matching.length} ${kind} connections: name one by its id (GET /dns-providers).`,
    )
  return ok(matching[0]!)
}

export async function deleteConnection(
  deps: { connections: ConnectionStore },
  accountId: string,
  id: string,
): Promise<Result<null>> {
  if (!isUuid(id)) return connectionNotFound()
  return (await deps.connections.remove(accountId, id.toLowerCase())) ? ok(null) : connectionNotFound()
}

/** Where a domain's records are written: a connection, its adapter and the zone holding the domain. */
export interface Target {
  connection: Connection
  provider: DnsProvider
  zone: Zone
}

/** The longest candidate zone that is the domain or one of its parents (a delegated child wins). */
export function longestZone<T extends { zone: Zone }>(domain: string, candidates: T[]): T | null {
  const name = normalizeName(domain)
  let best: T | null = null
  for (const candidate of candidates) {
    if (!isInZone(name, candidate.zone.name)) continue
    if (best === null || candidate.zone.name.length > best.zone.name.length) best = candidate
  }
  return best
}

/**
 * The connected zone holding `domain`, asking every connection of the account for its zones. A
 * connection that cannot answer fails the lookup: it might hold a longer (delegated) zone, and
 * writing into the parent instead would put the record where nobody looks.
 */
export async function zoneFor(
  deps: { connections: ConnectionStore; open: OpenProvider },
  accountId: string,
  domain: string,
): Promise<Outcome<Target | null>> {
  const candidates: Target[] = []
  for (const connection of await deps.connections.all(accountId)) {
    const opened = await deps.open(connection)
    if (!opened.ok) return { ok: false, failure: providerFailure(connection.provider, opened.failure) }
    const zones = await opened.value.listZones()
    if (!zones.ok) return { ok: false, failure: providerFailure(connection.provider, zones.failure) }
    for (const zone of zones.value) candidates.push({ connection, provider: opened.value, zone })
  }
  return ok(longestZone(domain, candidates))
}
