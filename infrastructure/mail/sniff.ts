// What a payload is, told by its first bytes and never by its name or Content-Type: reporters
// send gzip as application/octet-stream, zips named .gz, XML as text/plain.

export type SniffedFormat = 'gzip' | 'zip' | 'xml' | 'json'

/** How many bytes (decompressed, for an archive) the sniffer wants to see. */
export const SNIFF_BYTES = 4096

/** XML's and JSON's white space: space, tab, line feed, carriage return. */
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d

/** The index of the first byte from `i` on that is not white space. */
function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isSpace(bytes[i])) i++
  return i
}

/** Leading UTF-8 byte order mark and white space, which XML and JSON senders both leave in. */
function skipPreamble(bytes: Uint8Array): number {
  return skipSpace(bytes, bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0)
}

function startsWith(bytes: Uint8Array, at: number, text: string): boolean {
  if (bytes.length < at + text.length) return false
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false
  return true
}

/**
 * The encoding of UTF-16 text, told by its byte order mark or, without one, by a NUL beside its
 * first `<` (XML 1.0 Appendix F: 3C 00 3F 00 / 00 3C 00 3F), which no ASCII-compatible text has.
 * The parser decodes it likewise (domain/reports/aggregate/byte-decoder.ts).
 */
function utf16(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const [b0, b1] = bytes
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0x3c && b1 === 0x00)) return 'utf-16le'
  if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0x00 && b1 === 0x3c)) return 'utf-16be'
  return null
}

/**
 * A JSON object as a TLS-RPT report is (RFC 8460 §4.3: UTF-8 JSON): `{`, white space, then `"` or
 * `}`, and no control character but white space in what the sniffer sees. Binary data starts with
 * `{` once in 256 times: a scanned PDF so taken for a report had its message quarantined as
 * invalid JSON (bench:ingest's eight big messages, one run in a dozen).
 */
function isJsonObjectText(bytes: Uint8Array, at: number): boolean {
  const i = skipSpace(bytes, at + 1)
  if (i < bytes.length && bytes[i] !== 0x22 && bytes[i] !== 0x7d) return false
  const end = Math.min(bytes.length, SNIFF_BYTES)
  for (let j = at; j < end; j++) {
    const b = bytes[j]!
    if ((b < 0x20 && !isSpace(b)) || b === 0x7f) return false
  }
  return true
}

export function sniffFormat(bytes: Uint8Array): SniffedFormat | null {
  // RFC 1952 §2.3.1: ID1 ID2 = 1f 8b. APPNOTE 4.3.7: a local file header starts "PK\3\4".
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip'
  if (startsWith(bytes, 0, 'PK\x03\x04')) return 'zip'
  // UTF-16 text is judged by the same rules, on its first characters.
  const wide = utf16(bytes)
  if (wide !== null) {
    const head = new TextDecoder(wide).decode(bytes.subarray(0, SNIFF_BYTES * 2)).replace(/^\uFEFF/, '')
    const format = sniffFormat(new TextEncoder().encode(head))
    return format === 'xml' ? 'xml' : null
  }
  const at = skipPreamble(bytes)
  if (startsWith(bytes, at, '{') && isJsonObjectText(bytes, at)) return 'json'
  // An XML declaration (optional, XML 1.0 §2.8) or the root element; anything else starting with
  // "<" (a comment, an xs:schema wrapper as ikea.com sends) counts only when a <feedback element
  // follows early, so an HTML attachment is not taken for a report. The element may carry a
  // namespace prefix (`<dmarc:feedback xmlns:dmarc="urn:ietf:params:xml:ns:dmarc-2.0">`,
  // Namespaces in XML §4), which the parser reads (domain/reports/aggregate/report-builder.ts).
  if (startsWith(bytes, at, '<?xml')) return 'xml'
  if (startsWith(bytes, at, '<') && hasFeedbackElement(bytes, at)) return 'xml'
  return null
}

/** `<feedback` or `<prefix:feedback`, then white space, `>` or `/`, within the sniffed bytes. */
const FEEDBACK_ELEMENT = /<(?:[A-Za-z_][\w.-]*:)?feedback[\s>/]/

function hasFeedbackElement(bytes: Uint8Array, at: number): boolean {
  if (startsWith(bytes, at, '<feedback')) return true
  // Latin-1 keeps one character per byte: the pattern is ASCII, and nothing else needs decoding.
  const head = new TextDecoder('latin1').decode(bytes.subarray(at, Math.min(bytes.length, SNIFF_BYTES)))
  return FEEDBACK_ELEMENT.test(head)
}
