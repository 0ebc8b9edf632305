// Pure helpers the DNS provider adapters share: name and value normalisation, validation of a set
// before it is written, and the TXT wire/presentation forms (RFC 1035 §3.3.14 and §5.1).

import { splitTxtStrings } from '../spf/chain.ts'
import { type ProviderResult, providerFail, providerOk, type RecordFilter, type RecordSet } from './ports.ts'

/** The types the adapters write. Reads return whatever the zone holds. */
export const WRITABLE_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT'] as const
export type WritableType = (typeof WRITABLE_TYPES)[number]

// RFC 2181 §8: a TTL is an unsigned 31-bit number.
const MAX_TTL = 2 ** 31 - 1
// RFC 1035 §3.3: a <character-string> is a length octet and at most 255 octets.
const MAX_STRING_BYTES = 255
// RFC 1035 §3.2.1: RDLENGTH is 16 bits; a TXT value must fit one RR's RDATA with its length octets.
const MAX_RDATA_BYTES = 65535

const utf8 = new TextEncoder()

/** Lower-case, trimmed, without the trailing dot (the port's form of every name). */
export function normalizeName(name: string): string {
  const trimmed = name.trim().toLowerCase()
  return trimmed === '.' ? '.' : trimmed.replace(/\.$/, '')
}

/** `name.` — the absolute form zone files and the PowerDNS API want. */
export function withTrailingDot(name: string): string {
  return name.endsWith('.') ? name : `${name}.`
}

export function isInZone(name: string, zone: string): boolean {
  const n = normalizeName(name)
  const z = normalizeName(zone)
  return n === z || n.endsWith(`.${z}`)
}

/**
 * RFC 1035 §2.3.4 sizes, letters, digits and hyphens, plus `_` (DKIM, DMARC, TLS-RPT names) and a
 * wildcard `*`, which is only a whole leftmost label (RFC 4592 §2.1.1).
 */
export function isDomainName(name: string): boolean {
  if (name === '' || name.length > 253) return false
  return name
    .split('.')
    .every((label, i) => (label === '*' && i === 0) || (label.length <= 63 && /^[a-z0-9_-]+$/.test(label)))
}

function isIPv4(value: string): boolean {
  const parts = value.split('.')
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)
}

function isIPv6(value: string): boolean {
  const halves = value.split('::')
  if (halves.length > 2) return false
  const groups = halves.flatMap((half) => (half === '' ? [] : half.split(':')))
  let count = groups.length
  const last = groups.at(-1)
  if (last?.includes('.')) {
    if (!isIPv4(last)) return false
    groups.pop()
    count += 1
  }
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return false
  return halves.length === 2 ? count <= 7 : count === 8
}

/** `preference exchange` of an MX value (RFC 1035 §3.3.9), or null. */
export function parseMx(value: string): { preference: number; exchange: string } | null {
  const match = /^\s*(\d{1,5})\s+(\S+)\s*$/.exec(value)
  if (!match) return null
  const preference = Number(match[1])
  const exchange = normalizeName(match[2]!)
  if (preference > 65535 || (exchange !== '.' && !isDomainName(exchange))) return null
  return { preference, exchange }
}

/** The value in the port's canonical form, or null when it is not a valid value of the type. */
export function normalizeValue(type: WritableType, value: string): string | null {
  switch (type) {
    case 'A':
      return isIPv4(value.trim()) ? value.trim() : null
    case 'AAAA':
      return isIPv6(value.trim()) ? value.trim().toLowerCase() : null
    case 'CNAME': {
      const target = normalizeName(value)
      return isDomainName(target) ? target : null
    }
    case 'MX': {
      const mx = parseMx(value)
      return mx ? `${mx.preference} ${mx.exchange}` : null
    }
    case 'TXT': {
      const strings = txtCharacterStrings(value)
      const bytes = strings.reduce((sum, s) => sum + 1 + utf8.encode(s).length, 0)
      return bytes <= MAX_RDATA_BYTES ? value : null
    }
  }
}

export function isWritableType(type: string): type is WritableType {
  return (WRITABLE_TYPES as readonly string[]).includes(type)
}

/** Which field of a record set a problem is in, as the API names it (docs/api.md, DNS providers). */
export type RecordSetField = 'name' | 'type' | 'ttl' | 'values'

export type RecordSetCheck =
  | { ok: true; value: RecordSet }
  | { ok: false; field: RecordSetField; message: string }

/** The set in canonical form, or which field is wrong and why. */
export function checkRecordSet(zoneName: string, set: RecordSet): RecordSetCheck {
  const wrong = (field: RecordSetField, message: string): RecordSetCheck => ({ ok: false, field, message })
  const zone = normalizeName(zoneName)
  const name = normalizeName(set.name)
  const type = set.type.trim().toUpperCase()
  if (!isDomainName(name)) return wrong('name', `"${set.name}" is not a domain name`)
  if (!isInZone(name, zone)) return wrong('name', `${name} is not in zone ${zone}`)
  if (!isWritableType(type))
    return wrong('type', `type ${set.type} is not writable (${WRITABLE_TYPES.join(', ')})`)
  if (!Number.isInteger(set.ttl) || set.ttl < 1 || set.ttl > MAX_TTL) {
    return wrong('ttl', `TTL ${set.ttl} is not a whole number of seconds from 1 to ${MAX_TTL}`)
  }
  if (set.values.length === 0) return wrong('values', 'a record set needs a value; delete it instead')
  const values: string[] = []
  for (const raw of set.values) {
    const value = normalizeValue(type, raw)
    if (value === null) return wrong('values', `"${raw}" is not a valid ${type} value`)
    // An RRset holds each record once (RFC 2181 §5); servers would silently merge duplicates.
    if (values.includes(value)) return wrong('values', `duplicate ${type} value "${value}"`)
    values.push(value)
  }
  // A CNAME owns its name alone, and never at the apex beside SOA and NS (RFC 2181 §10.1).
  if (type === 'CNAME' && values.length > 1) return wrong('values', 'a CNAME set has exactly one value')
  if (type === 'CNAME' && name === zone) return wrong('name', 'a CNAME cannot be at the zone apex')
  return { ok: true, value: { name, type, ttl: set.ttl, values } }
}

/** The set in canonical form, or `invalid` saying what is wrong with it (checkRecordSet). */
export function validateRecordSet(zoneName: string, set: RecordSet): ProviderResult<RecordSet> {
  const checked = checkRecordSet(zoneName, set)
  return checked.ok ? providerOk(checked.value) : providerFail('invalid', checked.message)
}

/** The sets that match the filter (name and type compared in canonical form). */
export function filterRecordSets(sets: RecordSet[], filter: RecordFilter = {}): RecordSet[] {
  const name = filter.name === undefined ? undefined : normalizeName(filter.name)
  const type = filter.type?.trim().toUpperCase()
  return sets.filter(
    (s) => (name === undefined || s.name === name) && (type === undefined || s.type === type),
  )
}

/** By name, then type, then sorted values: a stable order whatever the provider returned. */
export function sortRecordSets(sets: RecordSet[]): RecordSet[] {
  return sets
    .map((s) => ({ ...s, values: [...s.values].sort() }))
    .sort((a, b) => (a.name === b.name ? a.type.localeCompare(b.type) : a.name.localeCompare(b.name)))
}

/**
 * The character-strings for a TXT value: each at most 255 bytes (RFC 1035 §3.3.14). ASCII text is
 * cut by domain/spf/chain.ts (between terms where it can); other text by UTF-8 bytes, never inside
 * a character, so every string stays valid UTF-8 on its own.
 */
export function txtCharacterStrings(text: string): string[] {
  if (utf8.encode(text).length === text.length) return splitTxtStrings(text, MAX_STRING_BYTES)
  const out: string[] = []
  let current = ''
  let bytes = 0
  for (const char of text) {
    const size = utf8.encode(char).length
    if (bytes + size > MAX_STRING_BYTES) {
      out.push(current)
      current = ''
      bytes = 0
    }
    current += char
    bytes += size
  }
  out.push(current)
  return out
}

function quoteString(text: string): string {
  let out = '"'
  for (const byte of utf8.encode(text)) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`
    else if (byte >= 0x20 && byte <= 0x7e) out += String.fromCharCode(byte)
    else out += `\\${String(byte).padStart(3, '0')}`
  }
  return `${out}"`
}

/**
 * The zone-file form of a TXT value: `"part one" "part two"`, quotes and backslashes escaped and
 * other bytes outside printable ASCII as `\DDD` (RFC 1035 §5.1), so the text survives any parser.
 */
export function quoteTxt(text: string): string {
  return txtCharacterStrings(text).map(quoteString).join(' ')
}

/**
 * The logical text of a TXT value in zone-file form: its character-strings (quoted or bare)
 * unescaped and joined without separators (RFC 7208 §3.3). Text without quotes is returned as is,
 * since some providers (Cloudflare, for records made in its dashboard) store TXT content bare.
 */
export function unquoteTxt(content: string): string {
  const trimmed = content.trim()
  if (!trimmed.startsWith('"')) return content
  const bytes: number[] = []
  let i = 0
  while (i < trimmed.length) {
    const quoted = trimmed[i] === '"'
    if (quoted) i++
    while (i < trimmed.length) {
      const char = trimmed[i]!
      if (quoted ? char === '"' : /\s/.test(char)) break
      if (char === '\\' && /^\d{3}$/.test(trimmed.slice(i + 1, i + 4))) {
        bytes.push(Number(trimmed.slice(i + 1, i + 4)) & 0xff)
        i += 4
      } else {
        if (char === '\\') i++
        // Whole code points, so a character outside the BMP is not cut into lone surrogates.
        const point = trimmed.codePointAt(i)
        if (point === undefined) break
        const whole = String.fromCodePoint(point)
        for (const byte of utf8.encode(whole)) bytes.push(byte)
        i += whole.length
      }
    }
    if (quoted) i++
    while (i < trimmed.length && /\s/.test(trimmed[i]!)) i++
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}
