// The sources of a managed SPF record: what the user says may send for the domain, checked and put
// in one canonical form before any term is written, so that an invalid or looping source is
// refused with a message about that source rather than surfacing as a permerror at receivers.

import { type Failure, fail, ok, type Result } from '../shared/result.ts'
import { parseIpv4, parseIpv6 } from '../spf/ip.ts'
import { isQueryableName, normalizeName } from '../spf/lookups.ts'
import { hasMacros, parseDomainSpec, usesLetter } from '../spf/macro.ts'
import { formatNetwork, network } from '../spf/networks.ts'

interface SourceMeta {
  /** For people: "SendGrid". */
  label?: string
  /** The sending-service catalog id (domain/sources/catalog.ts) the source came from. */
  serviceId?: string
}

export type ManagedSource = SourceMeta &
  (
    | { kind: 'include'; domain: string }
    /** A CIDR network or a single address. */
    | { kind: 'ip4' | 'ip6'; network: string }
    | { kind: 'a' | 'mx'; domain: string }
  )

export type SourceCheck = { ok: true; source: ManagedSource } | { ok: false; field: string; message: string }

const KINDS = new Set(['include', 'ip4', 'ip6', 'a', 'mx'])
const NAME_LABEL = /^[a-z0-9_-]+$/
// §5.6 prefix lengths: digits without leading zeros, as record.ts reads them.
const PREFIX = /^(?:0|[1-9]\d{0,2})$/
const MAX_LABEL_TEXT = 100

const bad = (field: string, message: string): SourceCheck => ({ ok: false, field, message })

function checkDomain(
  raw: unknown,
  kind: string,
  zone: string | null,
): { value: string } | { message: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { message: `a ${kind} source needs a domain` }
  const text = raw.trim()
  const odd = /[^\x21-\x7e]/.exec(text)
  if (odd !== null) {
    return odd[0].charCodeAt(0) > 0x7e
      ? { message: `'${text}' is not ASCII: write an internationalised name in its A-label form (xn--…)` }
      : { message: `'${text}' contains whitespace or a control character` }
  }
  if (parseIpv4(text) !== null || parseIpv6(text) !== null) {
    return { message: `'${text}' is an IP address, not a domain: add it as an ip4 or ip6 source` }
  }
  const parsed = parseDomainSpec(text)
  if (!parsed.ok)
    return { message: `'${text}' is not a valid domain (position ${parsed.index}): ${parsed.message}` }
  let value = text
  if (hasMacros(parsed.tokens)) {
    // Inside the hosted record <domain> is the hosted name, not the user's (include changes it,
    // RFC 7208 §5.2), so %{d} would silently point somewhere else.
    if (usesLetter(parsed.tokens, 'd')) {
      return { message: `'${text}' uses %{d}, which would expand to the hosted name: write the domain out` }
    }
    // Macro letters are case-sensitive (%{D} URL-escapes, §7.3): kept as written.
  } else {
    value = normalizeName(text)
    if (!isQueryableName(value)) {
      return { message: `'${text}' is not a domain name: labels are 1-63 octets, the name at most 253` }
    }
    if (!value.split('.').every((label) => NAME_LABEL.test(label))) {
      return { message: `'${text}' may only contain letters, digits, hyphens and underscores between dots` }
    }
  }
  const lower = normalizeName(value)
  if (kind === 'include' && zone !== null && (lower === zone || lower.endsWith(`.${zone}`))) {
    return {
      message: `include:${value} points into the hosted zone ${zone}: the hosted record would include itself or another hosted record (a loop, RFC 7208 §5.2)`,
    }
  }
  return { value }
}

/** The widest networks a managed source may name (a /8 is 16.7 million IPv4 addresses). */
export const WIDEST_IP4 = 8
export const WIDEST_IP6 = 16

function checkNetwork(raw: unknown, kind: 'ip4' | 'ip6'): { value: string } | { message: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { message: `an ${kind} source needs a network` }
  const [addressText = '', prefixText, extra] = raw.trim().split('/')
  const address = kind === 'ip4' ? parseIpv4(addressText) : parseIpv6(addressText)
  if (address === null) {
    const other = kind === 'ip4' ? parseIpv6(addressText) : parseIpv4(addressText)
    if (other !== null)
      return { message: `'${addressText}' is an IPv${other.family} address: use kind ip${other.family}` }
    return { message: `'${addressText}' is not an IPv${kind === 'ip4' ? 4 : 6} address` }
  }
  const max = kind === 'ip4' ? 32 : 128
  let prefix = max
  if (prefixText !== undefined) {
    prefix = Number(prefixText)
    if (extra !== undefined || !PREFIX.test(prefixText) || prefix > max) {
      return { message: `'/${prefixText}' is not a prefix length from 1 to ${max}` }
    }
    if (prefix === 0) return { message: `/0 would authorise every ${kind} address on the Internet` }
    // No sender needs more: the largest networks providers publish in SPF are /11-/16 for IPv4
    // and /19-/36 for IPv6. A /1 authorised half the Internet without a word.
    const widest = kind === 'ip4' ? WIDEST_IP4 : WIDEST_IP6
    if (prefix < widest) {
      return {
        message: `/${prefix} would authorise ${kind === 'ip4' ? 2 ** (32 - prefix) : `2^${128 - prefix}`} addresses: give a network of /${widest} or narrower`,
      }
    }
  }
  // Host bits cleared: ip4:192.0.2.1/24 matches exactly what ip4:192.0.2.0/24 does (RFC 7208 §5.6).
  return { value: formatNetwork(network(address, prefix)) }
}

function checkText(raw: unknown, field: string): string | undefined | { message: string } {
  if (raw === undefined || raw === null) return undefined
  if (typeof raw !== 'string') return { message: `${field} must be text` }
  const text = raw.trim()
  if (text.length > MAX_LABEL_TEXT) return { message: `${field} is longer than ${MAX_LABEL_TEXT} characters` }
  return text === '' ? undefined : text
}

/**
 * One source in canonical form: domains lower-case without the trailing dot (unless they hold
 * macros), networks with host bits cleared. `zone` enables the loop check; null skips it.
 */
export function normalizeSource(source: ManagedSource, zone: string | null): SourceCheck {
  if (typeof source !== 'object' || source === null) return bad('kind', 'a source must be an object')
  const kind = (source as { kind?: unknown }).kind
  if (typeof kind !== 'string' || !KINDS.has(kind)) {
    return bad('kind', `kind must be one of include, ip4, ip6, a, mx (got ${JSON.stringify(kind)})`)
  }
  const meta: SourceMeta = {}
  for (const field of ['label', 'serviceId'] as const) {
    const text = checkText(source[field], field)
    if (typeof text === 'object') return bad(field, text.message)
    if (text !== undefined) meta[field] = text
  }
  if (source.kind === 'ip4' || source.kind === 'ip6') {
    const checked = checkNetwork(source.network, source.kind)
    if ('message' in checked) return bad('network', checked.message)
    return { ok: true, source: { kind: source.kind, network: checked.value, ...meta } }
  }
  const { domain } = source as { domain?: unknown }
  const checked = checkDomain(domain, source.kind, zone === null ? null : normalizeName(zone))
  if ('message' in checked) return bad('domain', checked.message)
  return { ok: true, source: { kind: source.kind, domain: checked.value, ...meta } }
}

/** The SPF term a (normalised) source is published as. */
export function sourceTerm(source: ManagedSource): string {
  return `${source.kind}:${'domain' in source ? source.domain : source.network}`
}

/** Identity of a source for dedupe and diffs: its term in canonical form; label and serviceId aside. */
export function sourceKey(source: ManagedSource): string {
  const checked = normalizeSource(source, null)
  return sourceTerm(checked.ok ? checked.source : source)
}

export interface NormalizedSources {
  sources: ManagedSource[]
  /** For each kept source, its index in the input (duplicates are dropped). */
  origin: number[]
}

export function normalizeSources(sources: readonly ManagedSource[], zone: string): Result<NormalizedSources> {
  if (!Array.isArray(sources)) return sourceFailure({ sources: ['sources must be a list'] })
  const errors: Record<string, string[]> = {}
  const out: NormalizedSources = { sources: [], origin: [] }
  const seen = new Set<string>()
  sources.forEach((source, index) => {
    const checked = normalizeSource(source, zone)
    if (!checked.ok) {
      errors[`sources[${index}].${checked.field}`] = [checked.message]
      return
    }
    const key = sourceTerm(checked.source)
    if (seen.has(key)) return
    seen.add(key)
    out.sources.push(checked.source)
    out.origin.push(index)
  })
  return Object.keys(errors).length > 0 ? sourceFailure(errors) : ok(out)
}

/** Normalised, deduplicated sources (first occurrence kept), or every invalid one by index. */
export function validateSources(sources: readonly ManagedSource[], zone: string): Result<ManagedSource[]> {
  const normalized = normalizeSources(sources, zone)
  return normalized.ok ? ok(normalized.value.sources) : normalized
}

/** A validation failure whose message names the first problem and counts the rest. */
export function sourceFailure<T = never>(errors: Record<string, string[]>): Result<T> {
  const entries = Object.entries(errors)
  const [field, messages] = entries[0]!
  const more = entries.length > 1 ? ` (and ${entries.length - 1} more)` : ''
  const failure: Failure = { code: 'validation_failed', message: `${field}: ${messages[0]}${more}`, errors }
  return fail(failure)
}
