// Character data: line-end normalisation, references, and reading values out of the tokenizer's
// buffer. Only the five predefined entities and character references exist without a DTD
// (XML 1.0 §4.6, §4.1); nothing else is expanded.
//
// Speed: text reaches the sink as a range of the buffer, and a value is read with one pass over
// its characters; trim() and toLowerCase() on a fresh slice cost several times more, and they
// were the parser's largest cost (docs/decisions-aggregate-parser.md). A value is a slice, which
// JSC backs with its chunk's storage: whatever keeps a value past its record (the rollup, a cache)
// keeps a copy made with detached(), or it would keep the whole chunk alive.

/** An element's text: source.slice(start, end), with references still to decode unless `decoded`. */
export interface XmlText {
  source: string
  start: number
  end: number
  decoded: boolean
}

export const EMPTY_TEXT: XmlText = { source: '', start: 0, end: 0, decoded: true }

const REFERENCE = /&(?:#([0-9]{1,7})|#x([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos));/g
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }

/** C0 controls but TAB, LF and CR, and DEL: damage in a value (XML 1.0 §2.2 Char excludes the C0 ones). */
const isControl = (c: number) => (c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 127
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it marks
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

function replaceReference(whole: string, decimal?: string, hex?: string, name?: string): string {
  if (name !== undefined) return PREDEFINED[name] ?? whole
  const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? '', 16)
  // XML 1.0 §2.2 Char: no C0 control but TAB, LF and CR, no surrogates, nothing past U+10FFFF. A
  // bad reference is damage in one value, not a reason to drop the report: it becomes U+FFFD, like
  // an invalid UTF-8 byte. DEL is a Char, but the API refuses it in text (docs/api.md): marked too.
  if (isControl(code) || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return '\uFFFD'
  return String.fromCodePoint(code)
}

/** XML 1.0 §2.11: CR LF and lone CR read as LF. */
export function normalizeNewlines(text: string): string {
  return text.indexOf('\r') === -1 ? text : text.replace(/\r\n?/g, '\n')
}

/**
 * Text content as the application sees it. An `&` that starts no known reference (`AT&T`,
 * `&nbsp;`) is kept as written: a recovery, and never an expansion.
 */
export function decodeText(raw: string): string {
  const text = normalizeNewlines(raw)
  return text.indexOf('&') === -1 ? text : text.replace(REFERENCE, replaceReference)
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 9 || c === 13

/**
 * A copy of a slice that shares no storage with the chunk it came from. JSC shares substring
 * storage: a 20-character value kept past its record (a source IP in the rollup) would keep its
 * whole chunk alive, and 100,000 of them kept every chunk of the largest report (~42 MB). Slicing
 * a rope back (` ${slice}`.slice(1), used before) is no copy: JSC takes the substring from the
 * fiber, so it retained exactly as much (measured with bun:jsc heapStats). trimStart() flattens the
 * rope into a new buffer first, at the cost of a plain slice; it removes exactly the added space
 * when the value starts with printable ASCII (read() has trimmed XML white space already). Other
 * values take a JSON round trip, slower but an exact copy of any string.
 */
export function detached(slice: string): string {
  const first = slice.charCodeAt(0)
  if (first > 0x20 && first < 0x7f) return ` ${slice}`.trimStart()
  return slice === '' ? '' : (JSON.parse(JSON.stringify(slice)) as string)
}

// Lower-cased values (results, dispositions, scopes, domain names) repeat on nearly every record.
// The last one seen in each slot of a small table, found by a hash of its characters, is handed out
// again when the same characters come: no new string per record, and the Maps downstream (the
// rollup's names, the organizational-domain cache) find a string whose hash is already known.
// Bounded (INTERN_SLOTS values of at most INTERN_MAX characters, copies that keep no chunk alive)
// and exact: a slot is used only when every character matches.
const INTERN_SLOTS = 1024
const INTERN_MAX = 64
const interned: string[] = new Array(INTERN_SLOTS).fill('')

/** The value in the slot of `hash` when it has exactly these characters, else a copy put there. */
function internedSlice(source: string, start: number, end: number, hash: number): string {
  const length = end - start
  const slot = (hash ^ (hash >>> 10)) & (INTERN_SLOTS - 1)
  const known = interned[slot]!
  if (known.length === length) {
    let i = 0
    while (i < length && known.charCodeAt(i) === source.charCodeAt(start + i)) i++
    if (i === length) return known
  }
  const value = detached(source.slice(start, end))
  interned[slot] = value
  return value
}

function read(text: XmlText, lower: boolean): string {
  const source = text.source
  let start = text.start
  let end = text.end
  while (start < end && isSpace(source.charCodeAt(start))) start++
  while (end > start && isSpace(source.charCodeAt(end - 1))) end--
  if (start === end) return ''
  // One pass decides whether the slice can be used as it is (the common case) and, for a short
  // lower-cased value, hashes it for the intern table.
  let plain = true
  let hash = end - start
  for (let i = start; i < end; i++) {
    const c = source.charCodeAt(i)
    if (c === 38 || c < 32 || c === 127 || (lower && c >= 65 && c <= 90)) {
      plain = false
      break
    }
    hash = (Math.imul(hash, 31) + c) | 0
  }
  if (plain)
    return lower && end - start <= INTERN_MAX
      ? internedSlice(source, start, end, hash)
      : source.slice(start, end)
  let value = source.slice(start, end)
  if (!text.decoded) value = decodeText(value).trim()
  // A raw control character (XML 1.0 §2.2 excludes the C0 ones but TAB, LF and CR) is damage in
  // the value, as a bad reference is (replaceReference). TAB and LF inside a value stay.
  value = value.replace(CONTROLS, '\uFFFD')
  // toLowerCase() returns its input when there is nothing to lower (a decoded value that held only
  // an unknown `&`), which may still be a slice of the chunk.
  return lower ? value.toLowerCase() : value
}

/** The content, trimmed, references decoded. */
export const textValue = (text: XmlText) => read(text, false)

/** textValue lower-cased: enumerated values and domain names. */
export const lowerValue = (text: XmlText) => read(text, true)

/** A non-negative integer of at most 15 digits (exact in a double), or -1. */
export function integerValue(text: XmlText): number {
  const source = text.source
  let start = text.start
  let end = text.end
  while (start < end && isSpace(source.charCodeAt(start))) start++
  while (end > start && isSpace(source.charCodeAt(end - 1))) end--
  if (start === end || end - start > 15) return -1
  let value = 0
  for (let i = start; i < end; i++) {
    const digit = source.charCodeAt(i) - 48
    // A character reference (`&#55;`) is a digit too: read the decoded text (the rare case).
    if (digit < 0 || digit > 9) return text.decoded ? -1 : decodedInteger(textValue(text))
    value = value * 10 + digit
  }
  return value
}

function decodedInteger(value: string): number {
  return /^[0-9]{1,15}$/.test(value) ? Number(value) : -1
}
