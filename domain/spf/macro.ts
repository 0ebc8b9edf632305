// SPF macro strings (RFC 7208 §7): parsing with exact error positions, and expansion.
// Parsing is separate from expansion so a record's syntax is checked once, up front (§4.6: syntax
// errors anywhere in the record are a permerror), and expansion itself cannot fail.

import { dottedIp, formatIp, type IpAddress } from './ip.ts'

export type MacroLetter = 's' | 'l' | 'o' | 'd' | 'i' | 'p' | 'h' | 'c' | 'r' | 't' | 'v'

export type MacroToken =
  | { kind: 'literal'; text: string }
  /** `%%`, `%_` or `%-` (§7.1): part of macro-expand, so it may end a domain-spec. */
  | { kind: 'escape'; raw: '%%' | '%_' | '%-'; text: string }
  | {
      kind: 'macro'
      letter: MacroLetter
      /** Upper-case letter: the expansion is URL-escaped (§7.3). */
      urlEscape: boolean
      /** Keep only this many right-hand parts; null keeps all. Never 0 (§7.3). */
      keep: number | null
      reverse: boolean
      /** Split characters; '.' when none are given (§7.3). */
      delimiters: string
      raw: string
    }

/**
 * Where a macro string appears decides what it may contain: `c`, `r` and `t` only in explanation
 * text (§7.3: "allowed only in 'exp' text"), so not in the value of an unknown modifier either;
 * spaces only in explanation text (§6.2 explain-string).
 */
export type MacroContext = 'domain-spec' | 'explanation' | 'modifier'

export type MacroParse =
  | { ok: true; tokens: MacroToken[] }
  | { ok: false /** Offset in the parsed text. */; index: number; message: string }

const DOMAIN_LETTERS = 'slodiphv'
const ALL_LETTERS = 'slodiphcrtv'
const ESCAPES = { '%': '%', _: ' ', '-': '%20' } as const

function describeChar(char: string): string {
  const code = char.codePointAt(0) ?? 0
  const hex = code.toString(16).toUpperCase().padStart(4, '0')
  return code > 0x20 && code < 0x7f ? `'${char}'` : `U+${hex}`
}

export function parseMacroString(text: string, context: MacroContext): MacroParse {
  const letters = context === 'explanation' ? ALL_LETTERS : DOMAIN_LETTERS
  const tokens: MacroToken[] = []
  let literal = ''
  const flush = () => {
    if (literal !== '') tokens.push({ kind: 'literal', text: literal })
    literal = ''
  }
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (char !== '%') {
      const code = char.charCodeAt(0)
      // §7.1 macro-literal = %x21-24 / %x26-7E (visible 7-bit ASCII); §6.2 also allows SP in exp text.
      const visible = code >= 0x21 && code <= 0x7e
      if (!visible && !(char === ' ' && context === 'explanation')) {
        return { ok: false, index: i, message: `character ${describeChar(char)} is not allowed here` }
      }
      literal += char
      i++
      continue
    }
    const next = text[i + 1]
    if (next === '%' || next === '_' || next === '-') {
      flush()
      tokens.push({ kind: 'escape', raw: `%${next}`, text: ESCAPES[next] })
      i += 2
      continue
    }
    if (next !== '{') {
      // §7.1: a '%' not followed by '{', '%', '-' or '_' is a syntax error.
      return { ok: false, index: i, message: "'%' must be followed by '{', '%', '_' or '-'" }
    }
    const close = text.indexOf('}', i + 2)
    if (close === -1) return { ok: false, index: i, message: "macro '%{' is not closed with '}'" }
    const body = text.slice(i + 2, close)
    // §7.1: macro-letter transformers *delimiter, delimiter = "." / "-" / "+" / "," / "/" / "_" / "="
    const match = /^([a-zA-Z])(\d*)([rR]?)([.\-+,/_=]*)$/.exec(body)
    if (match === null) {
      return { ok: false, index: i, message: `'%{${body}}' is not a valid macro (RFC 7208 §7.1)` }
    }
    const [, letterText = '', digits = '', reverse = '', delimiters = ''] = match
    const letter = letterText.toLowerCase()
    if (!letters.includes(letter)) {
      const where = ALL_LETTERS.includes(letter) ? ' (only allowed in exp text)' : ''
      return { ok: false, index: i, message: `unknown macro letter '${letterText}'${where}` }
    }
    // §7.3: "If a DIGIT is specified, the value MUST be nonzero". Large values keep every part.
    const keep = digits === '' ? null : Math.min(Number(digits), 1_000_000)
    if (keep === 0) return { ok: false, index: i, message: 'a macro digit transformer must be nonzero' }
    flush()
    tokens.push({
      kind: 'macro',
      letter: letter as MacroLetter,
      urlEscape: letterText !== letter,
      keep,
      reverse: reverse !== '',
      delimiters: delimiters === '' ? '.' : delimiters,
      raw: text.slice(i, close + 1),
    })
    i = close + 1
  }
  flush()
  return { ok: true, tokens }
}

// §7.1 toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum ).
// The first alternative is written with its first letter as the ALPHA (the same strings): as
// `[a-z0-9]*[a-z]` it tried every letter as that one, quadratic in a 64 KB TXT record.
const TOPLABEL = /^(?:[0-9]*[a-z][a-z0-9]*|[a-z0-9]+-[a-z0-9-]*[a-z0-9])$/i

/**
 * domain-spec = macro-string domain-end; domain-end = ( "." toplabel [ "." ] ) / macro-expand.
 * The check is on the unexpanded text: RFC 7208 §7.1 does not re-check syntax after expansion.
 */
export function parseDomainSpec(text: string): MacroParse {
  if (text === '') return { ok: false, index: 0, message: 'the domain-spec is empty' }
  const parsed = parseMacroString(text, 'domain-spec')
  if (!parsed.ok) return parsed
  const last = parsed.tokens[parsed.tokens.length - 1]
  if (last === undefined || last.kind !== 'literal') return parsed
  const tail = last.text.endsWith('.') ? last.text.slice(0, -1) : last.text
  const dot = tail.lastIndexOf('.')
  const toplabel = tail.slice(dot + 1)
  if (dot === -1 || !TOPLABEL.test(toplabel)) {
    const index = text.length - last.text.length + dot + 1
    const why =
      dot === -1 ? 'a domain-spec needs at least two labels' : `'${toplabel}' is not a valid top-level label`
    return { ok: false, index, message: `${why} (RFC 7208 §7.1 domain-end)` }
  }
  return parsed
}

export function usesLetter(tokens: readonly MacroToken[], letter: MacroLetter): boolean {
  return tokens.some((token) => token.kind === 'macro' && token.letter === letter)
}

export function hasMacros(tokens: readonly MacroToken[]): boolean {
  return tokens.some((token) => token.kind === 'macro')
}

/** What the macro letters stand for during one check_host() evaluation (§7.3). */
export interface MacroValues {
  /** <sender>, with "postmaster" already substituted for a missing local-part (§4.3). */
  sender: string
  localPart: string
  senderDomain: string
  /** The current <domain>, which changes across include and redirect. */
  domain: string
  ip: IpAddress
  helo: string
  /** `r`: the receiving host; "unknown" when not given (§7.3). */
  receivingHost?: string
  /** `t`: evaluation time, passed in rather than read from a clock. */
  now: Date
  /** `p`: the validated domain name, when one was looked up; "unknown" otherwise (§7.3). */
  validatedDomain?: string
}

function letterValue(letter: MacroLetter, values: MacroValues): string {
  switch (letter) {
    case 's':
      return values.sender
    case 'l':
      return values.localPart
    case 'o':
      return values.senderDomain
    case 'd':
      return values.domain
    case 'i':
      return dottedIp(values.ip)
    case 'p':
      return values.validatedDomain ?? 'unknown'
    case 'h':
      return values.helo
    case 'c':
      return formatIp(values.ip)
    case 'r':
      return values.receivingHost ?? 'unknown'
    case 't':
      return String(Math.floor(values.now.getTime() / 1000))
    case 'v':
      return values.ip.family === 4 ? 'in-addr' : 'ip6'
  }
}

// §7.3: upper-case macros are URL-escaped; everything outside RFC 3986 "unreserved" is %-encoded.
const UNRESERVED = /^[A-Za-z0-9\-._~]$/
const encoder = new TextEncoder()

export function urlEscape(text: string): string {
  let out = ''
  for (const char of text) {
    if (UNRESERVED.test(char)) {
      out += char
      continue
    }
    for (const byte of encoder.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Splits on any of the delimiter characters, without building a RegExp per macro. */
function splitOn(value: string, delimiters: string): string[] {
  if (delimiters === '.') return value.split('.')
  const parts: string[] = []
  let start = 0
  for (let i = 0; i < value.length; i++) {
    if (delimiters.includes(value[i]!)) {
      parts.push(value.slice(start, i))
      start = i + 1
    }
  }
  parts.push(value.slice(start))
  return parts
}

function transform(value: string, token: Extract<MacroToken, { kind: 'macro' }>): string {
  let parts = splitOn(value, token.delimiters)
  if (token.reverse) parts = parts.reverse()
  if (token.keep !== null && token.keep < parts.length) parts = parts.slice(parts.length - token.keep)
  return parts.join('.')
}

export function expandMacros(tokens: readonly MacroToken[], values: MacroValues): string {
  let out = ''
  for (const token of tokens) {
    if (token.kind !== 'macro') {
      out += token.text
      continue
    }
    const transformed = transform(letterValue(token.letter, values), token)
    out += token.urlEscape ? urlEscape(transformed) : transformed
  }
  return out
}

/**
 * §7.3: when an expanded domain name exceeds 253 characters, remove labels from the left until it
 * fits. A trailing dot is dropped first (§7.3 test `trailing-dot-domain`: it is not part of the name).
 */
export function truncateDomainName(name: string): string {
  let out = name.endsWith('.') ? name.slice(0, -1) : name
  while (out.length > 253) {
    const dot = out.indexOf('.')
    if (dot === -1) break
    out = out.slice(dot + 1)
  }
  return out
}

export function expandDomainSpec(tokens: readonly MacroToken[], values: MacroValues): string {
  return truncateDomainName(expandMacros(tokens, values))
}
