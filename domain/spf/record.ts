// SPF record selection and parsing (RFC 7208 §3.3, §4.5, §4.6, §5, §6, §12 ABNF).
// The whole record is parsed before evaluation so that a syntax error anywhere is a permerror
// (§4.6), and each error says where it is, for people fixing their DNS.

import { type IpAddress, parseIpv4, parseIpv6 } from './ip.ts'
import { type MacroToken, parseDomainSpec, parseMacroString } from './macro.ts'

export type Qualifier = '+' | '-' | '~' | '?'

export interface DomainSpec {
  text: string
  tokens: MacroToken[]
}

export type Mechanism =
  | { kind: 'all' }
  | { kind: 'include' | 'exists'; domain: DomainSpec }
  /** cidr4/cidr6 are null when not written (then /32 and /128 apply, RFC 7208 §5.3). */
  | { kind: 'a' | 'mx'; domain: DomainSpec | null; cidr4: number | null; cidr6: number | null }
  | { kind: 'ptr'; domain: DomainSpec | null }
  | { kind: 'ip4' | 'ip6'; address: IpAddress; prefix: number | null }

export type MechanismKind = Mechanism['kind']

export interface Directive {
  type: 'directive'
  qualifier: Qualifier
  /** Whether the qualifier was written out (`+a`) rather than implied (`a`). */
  explicitQualifier: boolean
  mechanism: Mechanism
  /** The term as written. */
  text: string
  /** Offset of the term in the record text. */
  position: number
}

export interface Modifier {
  type: 'modifier'
  /** Lower-cased: modifier names are case-insensitive (RFC 7208 §4.6.1). */
  name: string
  value: string
  text: string
  position: number
}

export type SpfTerm = Directive | Modifier

export interface SpfRecord {
  text: string
  terms: SpfTerm[]
  directives: Directive[]
  /** §6.1; evaluation ignores it when the record has an `all` mechanism. */
  redirect: DomainSpec | null
  /** §6.2 */
  explanation: DomainSpec | null
  /** Unknown modifiers are kept (and must still have valid macro syntax, §6). */
  unknownModifiers: Modifier[]
  hasAll: boolean
}

export interface SpfSyntaxError {
  /** Offset of the offending character in the record text. */
  position: number
  /** The term that holds the error, as written ('' for the record as a whole). */
  term: string
  termPosition: number
  message: string
}

export type SpfParse = { ok: true; record: SpfRecord } | { ok: false; error: SpfSyntaxError }

/** RFC 7208 §4.5: exactly "v=spf1" followed by a space or the end, case-insensitive. */
export function isSpfRecord(text: string): boolean {
  // Character by character: this runs on every TXT record of every name check_host() asks about.
  if (text.length < 6 || (text.length > 6 && text.charCodeAt(6) !== 0x20)) return false
  return (
    (text.charCodeAt(0) | 0x20) === 0x76 && // v
    text.charCodeAt(1) === 0x3d && // =
    (text.charCodeAt(2) | 0x20) === 0x73 && // s
    (text.charCodeAt(3) | 0x20) === 0x70 && // p
    (text.charCodeAt(4) | 0x20) === 0x66 && // f
    text.charCodeAt(5) === 0x31 // 1
  )
}

/** RFC 7208 §3.3: the character-strings of one TXT RR are concatenated with no spaces. */
export function joinTxtStrings(strings: readonly string[]): string {
  return strings.length === 1 ? strings[0]! : strings.join('')
}

/** RFC 7208 §4.5: keep only the TXT records that are SPF records; the caller decides on 0 / 1 / many. */
export function selectSpfRecords(txtRecords: readonly (readonly string[])[]): string[] {
  return txtRecords.map(joinTxtStrings).filter(isSpfRecord)
}

const QUALIFIERS = '+-~?'
// §4.6.1 name = ALPHA *( ALPHA / DIGIT / "-" / "_" / "." ), then "=" before any ":" or "/".
const MODIFIER = /^([a-z][a-z0-9\-_.]*)=/i
// §5.6 cidr lengths: 1*DIGIT, read as forbidding leading zeros like ip4-network does (test cidr4-032).
const CIDR = /^(?:0|[1-9]\d{0,2})$/

type Failed = { ok: false; offset: number; message: string }
type TermParse = { ok: true; term: SpfTerm } | Failed
type MechanismParse = { ok: true; m: Mechanism } | Failed
type SpecParse = { ok: true; spec: DomainSpec } | Failed

function termError(offset: number, message: string): Failed {
  return { ok: false, offset, message }
}

function cidr(digits: string, max: number): number | null {
  if (!CIDR.test(digits)) return null
  const value = Number(digits)
  return value <= max ? value : null
}

function domainSpec(text: string, offset: number): SpecParse {
  const parsed = parseDomainSpec(text)
  if (!parsed.ok) return termError(offset + parsed.index, parsed.message)
  return { ok: true, spec: { text, tokens: parsed.tokens } }
}

/** `rest` is what follows the mechanism name; `at` is its offset in the term. */
function parseMechanism(name: string, rest: string, at: number): MechanismParse {
  switch (name) {
    case 'all':
      if (rest !== '') return termError(at, "'all' takes no argument (RFC 7208 §5.1)")
      return { ok: true, m: { kind: 'all' } }
    case 'include':
    case 'exists': {
      if (!rest.startsWith(':'))
        return termError(at, `'${name}' needs ':' and a domain (RFC 7208 §5.2, §5.7)`)
      const spec = domainSpec(rest.slice(1), at + 1)
      return spec.ok ? { ok: true, m: { kind: name, domain: spec.spec } } : spec
    }
    case 'ptr': {
      if (rest === '') return { ok: true, m: { kind: 'ptr', domain: null } }
      if (!rest.startsWith(':')) return termError(at, "'ptr' takes only ':' and a domain (RFC 7208 §5.5)")
      const spec = domainSpec(rest.slice(1), at + 1)
      return spec.ok ? { ok: true, m: { kind: 'ptr', domain: spec.spec } } : spec
    }
    case 'a':
    case 'mx':
      return parseAddressMechanism(name, rest, at)
    case 'ip4':
    case 'ip6': {
      if (!rest.startsWith(':')) return termError(at, `'${name}' needs ':' and a network (RFC 7208 §5.6)`)
      const value = rest.slice(1)
      const slash = value.indexOf('/')
      const addressText = slash === -1 ? value : value.slice(0, slash)
      const address = name === 'ip4' ? parseIpv4(addressText) : parseIpv6(addressText)
      if (address === null) return termError(at + 1, `'${addressText}' is not a valid ${name} address`)
      if (slash === -1) return { ok: true, m: { kind: name, address, prefix: null } }
      const prefix = cidr(value.slice(slash + 1), name === 'ip4' ? 32 : 128)
      if (prefix === null)
        return termError(at + 1 + slash, `invalid ${name} prefix length '${value.slice(slash)}'`)
      return { ok: true, m: { kind: name, address, prefix } }
    }
    default:
      return termError(0, `unknown mechanism '${name}'`)
  }
}

/** RFC 7208 §5.3, §5.4: "a"/"mx" [ ":" domain-spec ] [ ip4-cidr-length ] [ "//" ip6-cidr-length ]. */
function parseAddressMechanism(kind: 'a' | 'mx', rest: string, at: number): MechanismParse {
  let body = rest
  let cidr6: number | null = null
  let cidr4: number | null = null
  const six = /\/\/(\d+)$/.exec(body)
  if (six !== null) {
    cidr6 = cidr(six[1]!, 128)
    if (cidr6 === null) return termError(at + six.index, `invalid ip6 prefix length '${six[0]}'`)
    body = body.slice(0, six.index)
  }
  const four = /\/(\d+)$/.exec(body)
  if (four !== null) {
    cidr4 = cidr(four[1]!, 32)
    if (cidr4 === null) return termError(at + four.index, `invalid ip4 prefix length '${four[0]}'`)
    body = body.slice(0, four.index)
  }
  if (body === '') return { ok: true, m: { kind, domain: null, cidr4, cidr6 } }
  if (!body.startsWith(':')) return termError(at, `unexpected '${body}' after '${kind}'`)
  const spec = domainSpec(body.slice(1), at + 1)
  return spec.ok ? { ok: true, m: { kind, domain: spec.spec, cidr4, cidr6 } } : spec
}

function parseTerm(text: string, position: number): TermParse {
  const modifier = MODIFIER.exec(text)
  if (modifier !== null) {
    const name = modifier[1]!.toLowerCase()
    const value = text.slice(modifier[0].length)
    const at = modifier[0].length
    if (name === 'redirect' || name === 'exp') {
      // A malformed redirect/exp is an error, not an unknown modifier (test redirect-syntax-error).
      const spec = domainSpec(value, at)
      if (!spec.ok) return spec
    } else {
      const parsed = parseMacroString(value, 'modifier')
      if (!parsed.ok) return termError(at + parsed.index, parsed.message)
    }
    return { ok: true, term: { type: 'modifier', name, value, text, position } }
  }
  const explicitQualifier = QUALIFIERS.includes(text[0] ?? '')
  const qualifier = (explicitQualifier ? text[0] : '+') as Qualifier
  const body = explicitQualifier ? text.slice(1) : text
  const nameLength = /^[^:/]*/.exec(body)![0].length
  const nameText = body.slice(0, nameLength)
  const offset = explicitQualifier ? 1 : 0
  const bad = /[^\x21-\x7e]/.exec(nameText)
  if (bad !== null) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
    return termError(offset + bad.index, `character U+${code} is not allowed in an SPF record`)
  }
  const parsed = parseMechanism(nameText.toLowerCase(), body.slice(nameLength), nameLength)
  if (!parsed.ok) return { ...parsed, offset: offset + parsed.offset }
  return {
    ok: true,
    term: { type: 'directive', qualifier, explicitQualifier, mechanism: parsed.m, text, position },
  }
}

/** Parses a record that `isSpfRecord` accepted; anything else is reported as an error. */
export function parseSpfRecord(text: string): SpfParse {
  if (!isSpfRecord(text)) {
    return {
      ok: false,
      error: { position: 0, term: '', termPosition: 0, message: "the record does not start with 'v=spf1'" },
    }
  }
  const terms: SpfTerm[] = []
  // §4.6.1 / §12: terms are separated by one or more SP only; any other whitespace or control
  // character stays inside a term and makes it invalid (tests control-char-policy, badip4).
  for (const match of text.slice(6).matchAll(/[^ ]+/g)) {
    const position = 6 + match.index
    const parsed = parseTerm(match[0], position)
    if (!parsed.ok) {
      const error = { position: position + parsed.offset, term: match[0], termPosition: position }
      return { ok: false, error: { ...error, message: parsed.message } }
    }
    terms.push(parsed.term)
  }
  const record: SpfRecord = {
    text,
    terms,
    directives: [],
    redirect: null,
    explanation: null,
    unknownModifiers: [],
    hasAll: false,
  }
  for (const term of terms) {
    if (term.type === 'directive') {
      record.directives.push(term)
      if (term.mechanism.kind === 'all') record.hasAll = true
      continue
    }
    if (term.name !== 'redirect' && term.name !== 'exp') {
      record.unknownModifiers.push(term)
      continue
    }
    // §6: redirect and exp MUST NOT appear more than once each.
    const slot = term.name === 'redirect' ? 'redirect' : 'explanation'
    if (record[slot] !== null) {
      const error = { position: term.position, term: term.text, termPosition: term.position }
      return {
        ok: false,
        error: { ...error, message: `'${term.name}=' appears more than once (RFC 7208 §6)` },
      }
    }
    const parsed = parseDomainSpec(term.value)
    if (parsed.ok) record[slot] = { text: term.value, tokens: parsed.tokens }
  }
  return { ok: true, record }
}
