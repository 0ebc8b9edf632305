// Bytes to text for the tokenizer. UTF-8 unless a byte order mark, UTF-16's first `<`, or the XML
// declaration says otherwise (XML 1.0 §4.3.3, Appendix F). Invalid sequences become U+FFFD instead
// of ending the parse: reporters do send stray Windows-1252 bytes in UTF-8 reports (parsedmarc
// invalid_utf_8.xml).
//
// Speed: a fatal, non-streaming UTF-8 TextDecoder is some 30 times faster than a replacing
// streaming one (docs/decisions-aggregate-parser.md). So each chunk is cut after its last complete
// UTF-8 sequence (the 0-3 bytes of a split sequence wait for the next chunk), decoded fatally, and
// decoded again with replacement only when it really holds invalid bytes. Cutting at a sequence
// boundary gives the same text as decoding the whole input at once.

/** Enough for any XML declaration; a declaration that does not end within it is ignored. */
const SNIFF_BYTES = 512

export interface ChunkDecoder {
  /** Text decoded so far; '' while the first bytes are still being examined. */
  decode(chunk: Uint8Array | string): string
  /** What is left at the end of input. */
  end(): string
}

const ascii = (bytes: Uint8Array) => String.fromCharCode(...bytes)

/**
 * The declared encoding when the runtime can decode it and it reads the declaration's own bytes
 * as ASCII (ISO-8859-1, Windows-1252, ISO-8859-15...). A declaration that claims UTF-16 or an
 * unknown encoding, in bytes that read as ASCII, is wrong: UTF-8 is the best guess.
 */
function declaredEncoding(head: Uint8Array): string {
  const declaration = /^<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(ascii(head))
  const label = declaration?.[1]
  if (label === undefined) return 'utf-8'
  try {
    const encoding = new TextDecoder(label).encoding
    return encoding.startsWith('utf-16') || encoding === 'replacement' ? 'utf-8' : encoding
  } catch {
    return 'utf-8'
  }
}

/** The encoding and the length of its byte order mark; null while more bytes are needed. */
function sniff(head: Uint8Array, final: boolean): [string, number] | null {
  const [b0, b1, b2] = head
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return ['utf-8', 3]
  if (b0 === 0xff && b1 === 0xfe) return ['utf-16le', 2]
  if (b0 === 0xfe && b1 === 0xff) return ['utf-16be', 2]
  // UTF-16 without a byte order mark (XML 1.0 Appendix F: `3C 00 3F 00`, `00 3C 00 3F`). XML 1.0
  // §4.3.3 wants the mark, but a NUL beside the first `<` is no XML in an ASCII-compatible encoding
  // (§2.2 Char excludes it). Read as UTF-8, each `<` would open an element and the report would
  // fail on the depth limit, which misleads.
  if (b0 === 0x3c && b1 === 0x00) return ['utf-16le', 0]
  if (b0 === 0x00 && b1 === 0x3c) return ['utf-16be', 0]
  if (b0 === 0x00 && head.length < 2 && !final) return null
  const start = ascii(head.subarray(0, 5))
  if (!'<?xml'.startsWith(start)) return ['utf-8', 0]
  if (start.length < 5) return final ? ['utf-8', 0] : null
  const window = head.subarray(0, SNIFF_BYTES)
  const close = window.indexOf(0x3e)
  if (close === -1 && head.length < SNIFF_BYTES && !final) return null
  return [declaredEncoding(close === -1 ? window : window.subarray(0, close + 1)), 0]
}

/** Where the last, incomplete UTF-8 sequence of `bytes` starts (bytes.length when none is). */
function completeLength(bytes: Uint8Array): number {
  const n = bytes.length
  let i = n - 1
  while (i >= 0 && i > n - 4 && (bytes[i]! & 0xc0) === 0x80) i--
  if (i < 0) return n
  const lead = bytes[i]!
  if (lead < 0xc0) return n
  const needs = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
  return n - i < needs ? i : n
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
}

/** UTF-8, fast path first. `ignoreBOM`: a U+FEFF at the start of a later chunk is text. */
function utf8Decoder() {
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const lenient = new TextDecoder('utf-8', { ignoreBOM: true })
  let pending: Uint8Array = new Uint8Array(0)
  const decodeWhole = (bytes: Uint8Array) => {
    try {
      return strict.decode(bytes)
    } catch {
      return lenient.decode(bytes)
    }
  }
  return {
    decode(chunk: Uint8Array): string {
      const bytes = concat(pending, chunk)
      const cut = completeLength(bytes)
      pending = bytes.slice(cut)
      return decodeWhole(cut === bytes.length ? bytes : bytes.subarray(0, cut))
    },
    end(): string {
      const rest = pending
      pending = new Uint8Array(0)
      return rest.length === 0 ? '' : decodeWhole(rest)
    },
  }
}

function streamingDecoder(encoding: string) {
  const decoder = new TextDecoder(encoding, { ignoreBOM: true })
  return {
    decode: (chunk: Uint8Array) => decoder.decode(chunk, { stream: true }),
    end: () => decoder.decode(),
  }
}

export function createChunkDecoder(): ChunkDecoder {
  let decoder: { decode(chunk: Uint8Array): string; end(): string } | null = null
  let head: Uint8Array = new Uint8Array(0)

  function start(final: boolean): string {
    const sniffed = sniff(head, final)
    if (sniffed === null) return ''
    const [encoding, bom] = sniffed
    decoder = encoding === 'utf-8' ? utf8Decoder() : streamingDecoder(encoding)
    const text = decoder.decode(head.subarray(bom))
    head = new Uint8Array(0)
    return final ? text + decoder.end() : text
  }

  return {
    decode(chunk) {
      if (typeof chunk === 'string') {
        // Already text: whatever bytes came before it are flushed first.
        if (decoder === null) return head.length === 0 ? chunk : start(true) + chunk
        return decoder.end() + chunk
      }
      if (decoder !== null) return decoder.decode(chunk)
      head = concat(head, chunk)
      return start(false)
    },
    end() {
      if (decoder === null) return head.length === 0 ? '' : start(true)
      return decoder.end()
    },
  }
}
