// What a user gives to connect a DNS provider (`POST /dns-providers/authenticate`, body
// `{provider, credentials, name?}`), split into the settings that may be shown again and the one
// secret that is sealed and never returned (the API key, the API token, the TSIG secret).

import { fail, ok, type Result } from '../shared/result.ts'
import { isDomainName, normalizeName } from './record-set.ts'

export const PROVIDER_KINDS = ['powerdns', 'cloudflare', 'rfc2136'] as const
export type ProviderKind = (typeof PROVIDER_KINDS)[number]

export const TSIG_ALGORITHMS = ['hmac-sha1', 'hmac-sha256', 'hmac-sha384', 'hmac-sha512'] as const

export interface PowerDnsSettings {
  base_url: string
  server_id: string
}
export interface CloudflareSettings {
  /** Null: Cloudflare's own API. */
  base_url: string | null
  /** Set for account-owned tokens. */
  account_id: string | null
}
export interface Rfc2136Settings {
  /** `host`, `host:port` or `[v6]:port` of the primary that accepts updates. */
  server: string
  zones: string[]
  key_name: string
  key_algorithm: (typeof TSIG_ALGORITHMS)[number]
  transport: 'tcp' | 'udp'
}

/** Snake_case, as the API shows it. */
export type ProviderSettings =
  | ({ provider: 'powerdns' } & PowerDnsSettings)
  | ({ provider: 'cloudflare' } & CloudflareSettings)
  | ({ provider: 'rfc2136' } & Rfc2136Settings)

export interface ParsedCredentials {
  settings: ProviderSettings
  secret: string
}

const MAX_TEXT = 2048
const MAX_ZONES = 100

type Fields = Record<string, unknown>

/** Collects every problem, so one answer names every wrong field (`credentials.api_key`, ...). */
function collector(raw: Fields) {
  const errors: Record<string, string[]> = {}
  const problem = (key: string, message: string) => {
    errors[`credentials.${key}`] = [message]
    return null
  }
  function text(key: string, options: { required: boolean; pattern?: RegExp; hint?: string }) {
    const value = raw[key]
    if (value === undefined || value === null || value === '') {
      return options.required ? problem(key, `The ${key} field is required.`) : null
    }
    if (typeof value !== 'string') return problem(key, `The ${key} field must be a string.`)
    const trimmed = value.trim()
    if (trimmed === '' || trimmed.length > MAX_TEXT)
      return problem(key, `The ${key} field must be 1 to ${MAX_TEXT} characters.`)
    if (options.pattern && !options.pattern.test(trimmed))
      return problem(key, options.hint ?? `The ${key} field is not valid.`)
    return trimmed
  }
  return { errors, problem, text }
}

function finish(
  errors: Record<string, string[]>,
  parsed: () => ParsedCredentials,
): Result<ParsedCredentials> {
  const fields = Object.keys(errors)
  if (fields.length === 0) return ok(parsed())
  const first = errors[fields[0]!]![0]!
  const rest = fields.length - 1
  const more = rest > 0 ? ` (and ${rest} more error${rest > 1 ? 's' : ''})` : ''
  return fail({ code: 'validation_failed', message: `${first}${more}`, errors })
}

/** The credentials of one provider kind, checked for shape (reachability is checked by authenticating). */
export function parseCredentials(kind: ProviderKind, raw: Fields): Result<ParsedCredentials> {
  const { errors, problem, text } = collector(raw)
  switch (kind) {
    case 'powerdns': {
      const baseUrl = text('base_url', { required: true })
      const apiKey = text('api_key', { required: true })
      const serverId = text('server_id', {
        required: false,
        pattern: /^[A-Za-z0-9._-]{1,64}$/,
        hint: 'The server_id field is a PowerDNS server id such as localhost.',
      })
      return finish(errors, () => ({
        settings: { provider: kind, base_url: baseUrl!, server_id: serverId ?? 'localhost' },
        secret: apiKey!,
      }))
    }
    case 'cloudflare': {
      const apiToken = text('api_token', { required: true })
      const accountId = text('account_id', {
        required: false,
        pattern: /^[0-9a-f]{32}$/i,
        hint: 'The account_id field is a Cloudflare account id (32 hexadecimal characters).',
      })
      const baseUrl = text('base_url', { required: false })
      return finish(errors, () => ({
        settings: { provider: kind, base_url: baseUrl, account_id: accountId?.toLowerCase() ?? null },
        secret: apiToken!,
      }))
    }
    case 'rfc2136': {
      const server = text('server', {
        required: true,
        pattern: /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+|[0-9a-fA-F:]+)(:\d{1,5})?$/,
        hint: 'The server field is host, host:port or [IPv6]:port of the primary DNS server.',
      })
      const zones = zoneList(raw.zones, problem)
      const keyName = text('key_name', { required: true })
      if (keyName !== null && !isDomainName(normalizeName(keyName)))
        problem('key_name', 'The key_name field is a TSIG key name such as dmarcwatch.')
      const algorithm = text('key_algorithm', { required: false })
      if (algorithm !== null && !(TSIG_ALGORITHMS as readonly string[]).includes(algorithm.toLowerCase()))
        problem('key_algorithm', `The key_algorithm field must be one of: ${TSIG_ALGORITHMS.join(', ')}.`)
      const secret = text('key_secret', {
        required: true,
        pattern: /^[A-Za-z0-9+/]+={0,2}$/,
        hint: 'The key_secret field is the base64 TSIG secret (as tsig-keygen prints it).',
      })
      const transport = text('transport', {
        required: false,
        pattern: /^(tcp|udp)$/,
        hint: 'The transport field must be one of: tcp, udp.',
      })
      return finish(errors, () => ({
        settings: {
          provider: kind,
          server: server!,
          zones: zones!,
          key_name: normalizeName(keyName!),
          key_algorithm: (algorithm?.toLowerCase() ?? 'hmac-sha256') as Rfc2136Settings['key_algorithm'],
          transport: (transport ?? 'tcp') as 'tcp' | 'udp',
        },
        secret: secret!,
      }))
    }
  }
}

function zoneList(value: unknown, problem: (key: string, message: string) => null): string[] | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ZONES)
    return problem(
      'zones',
      `The zones field is a list of 1 to ${MAX_ZONES} zone names (RFC 2136 cannot list zones).`,
    )
  const zones: string[] = []
  for (const entry of value) {
    const zone = typeof entry === 'string' ? normalizeName(entry) : ''
    if (!isDomainName(zone) || zone.includes('*'))
      return problem('zones', `"${String(entry)}" is not a zone name.`)
    if (!zones.includes(zone)) zones.push(zone)
  }
  return zones
}

/** The settings as shown by the API (without the `provider` discriminant, which has its own field). */
export function visibleSettings(settings: ProviderSettings): Record<string, unknown> {
  const { provider: _, ...rest } = settings
  return rest
}
