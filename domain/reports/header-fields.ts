// Header-style fields as failure reports carry them: the original message's header section
// (RFC 5322 §2.2) and the machine-readable `message/feedback-report` part, which uses the same
// syntax (RFC 5965 §3.1). Pure string work; the MIME decoding happened before this.

export interface HeaderField {
  /** Lower-cased field name. */
  name: string
  /** The unfolded value, trimmed; encoded words are left as they are (see decodeEncodedWords). */
  value: string
}

// RFC 5322 §2.2: field-name = 1*ftext, printable US-ASCII except the colon. Only the name is
// matched: `[ \t]*(.*)$` after it backtracked quadratically over a value of blanks ending in a lone
// CR (25 s for 250,000 characters), and the value is a slice.
const FIELD_NAME = /^([!-9;-~]+)[ \t]*:/
// Hostile input is bounded by the caller, but a report never needs more fields than this.
const MAX_FIELDS = 2000

/**
 * Splits a header block into fields. Continuation lines (RFC 5322 §2.2.3: starting with white
 * space) are unfolded into one space. With `untilBlankLine`, the first empty line ends the block,
 * as it ends a message's header section; lines that are neither fields nor continuations are
 * skipped rather than ending the parse, since report generators are sloppy.
 */
export function parseHeaderFields(text: string, options: { untilBlankLine?: boolean } = {}): HeaderField[] {
  const fields: HeaderField[] = []
  let current: HeaderField | null = null
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      if (options.untilBlankLine && (fields.length > 0 || current !== null)) break
      current = null
      continue
    }
    if (/^[ \t]/.test(line)) {
      if (current !== null) current.value = `${current.value} ${line.trim()}`.trim()
      continue
    }
    const match = FIELD_NAME.exec(line)
    const value = match === null ? '' : line.slice(match[0].length)
    // A lone CR (or U+2028/9) in the value: not a field line, as `.` never matched one.
    if (match === null || /[\r\u2028\u2029]/.test(value)) {
      current = null
      continue
    }
    if (fields.length >= MAX_FIELDS) break
    current = { name: match[1]!.toLowerCase(), value: value.trim() }
    fields.push(current)
  }
  return fields
}

export function firstField(fields: HeaderField[], name: string): string | null {
  return fields.find((field) => field.name === name)?.value ?? null
}

export function allFields(fields: HeaderField[], name: string): string[] {
  return fields.filter((field) => field.name === name).map((field) => field.value)
}

/** Removes RFC 5322 §3.2.2 comments (nested parentheses, outside quoted strings). */
export function stripComments(value: string): string {
  let out = ''
  let depth = 0
  let quoted = false
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!
    if (char === '\\' && (quoted || depth > 0)) {
      if (depth === 0) out += value.slice(i, i + 2)
      i++
      continue
    }
    if (depth === 0 && char === '"') quoted = !quoted
    if (!quoted && char === '(') depth++
    else if (!quoted && char === ')' && depth > 0) depth--
    else if (depth === 0) out += char
  }
  return out.replace(/\s+/g, ' ').trim()
}

// RFC 2047 §2: encoded-word = "=?" charset ["*" language] "?" encoding "?" encoded-text "?="
const ENCODED_WORD = /=\?([^?*\s]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=/g

function wordBytes(encoding: string, text: string): Uint8Array | null {
  if (encoding === 'B') {
    try {
      return Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
    } catch {
      return null
    }
  }
  // RFC 2047 §4.2: "_" is a space, "=XX" a byte in hex.
  const bytes: number[] = []
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (char === '_') bytes.push(0x20)
    else if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(char.charCodeAt(0) & 0xff)
  }
  return Uint8Array.from(bytes)
}

function decodeBytes(charset: string, bytes: Uint8Array): string | null {
  try {
    return new TextDecoder(charset.toLowerCase()).decode(bytes)
  } catch {
    return null
  }
}

/**
 * Decodes RFC 2047 encoded words. Adjacent words are joined (§6.2: the white space between them
 * is dropped) and their bytes decoded together, so a character split across two words survives.
 * A word in an unknown charset is left as written.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value
  let out = ''
  let last = 0
  let pending: { charset: string; bytes: number[]; raw: string } | null = null
  const flush = () => {
    if (pending === null) return
    out += decodeBytes(pending.charset, Uint8Array.from(pending.bytes)) ?? pending.raw
    pending = null
  }
  for (const match of value.matchAll(ENCODED_WORD)) {
    const between = value.slice(last, match.index)
    const charset = match[1]!
    const bytes = wordBytes(match[2]!.toUpperCase(), match[3]!)
    if (
      pending !== null &&
      (/\S/.test(between) || bytes === null || pending.charset !== charset.toLowerCase())
    ) {
      flush()
    }
    if (pending === null) out += between
    if (bytes === null) {
      out += match[0]
    } else if (pending === null) {
      pending = { charset: charset.toLowerCase(), bytes: [...bytes], raw: match[0] }
    } else {
      pending.bytes.push(...bytes)
      pending.raw += match[0]
    }
    last = match.index + match[0].length
  }
  flush()
  return out + value.slice(last)
}

/** `<a@b>` or `a@b` → `a@b`; an empty path (`<>`, RFC 5321 §4.5.5 null sender) → null. */
export function bareAddress(value: string): string | null {
  const cleaned = stripComments(value)
  const bracketed = /<([^<>]*)>/.exec(cleaned)
  const address = (bracketed ? bracketed[1]! : cleaned).trim()
  return address === '' ? null : address
}
