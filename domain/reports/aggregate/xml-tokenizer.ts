// A small streaming XML tokenizer specialised for DMARC aggregate reports: elements, text, CDATA,
// comments and processing instructions; attributes are passed through raw (only xmlns matters).
// It exists because saxes is too slow for the ingest target (docs/decisions-aggregate-parser.md).
//
// Hostile input: a DOCTYPE is refused, so there is no DTD and no entity expansion beyond the five
// predefined entities and character references (XML 1.0 §4.6, §4.1); depth, element count and
// text length are capped (XmlLimits). Every pending token is bounded by maxTextLength, so memory
// stays bounded whatever the input. Chunks may end anywhere: an incomplete token waits for more.
//
// Recovery (reporters send broken XML; parsedmarc recovers these too): a `<` that cannot start
// markup (`<bad-xml@bad-xml.net>`, `bad<xml.net`) is kept as a literal character, and an unknown
// `&name;` is kept as written. Neither expands anything.

import type { XmlLimits } from '../aggregate-types.ts'
import { decodeText, normalizeNewlines, type XmlText } from './xml-text.ts'

export interface XmlSink {
  /**
   * A start tag. `name` is the local name, `prefix` its namespace prefix ('' for none);
   * `attributes` is the raw text, or ''.
   */
  open(name: string, attributes: string, prefix: string): boolean
  /**
   * An end tag. `text` is the element's content when it had no child element, else null. The
   * object is reused: read it (xml-text.ts) before returning. Returning false stops the tokenizer.
   */
  close(name: string, text: XmlText | null): boolean
}

export interface XmlFailure {
  code: 'not_xml' | 'limit_exceeded'
  message: string
}

/** Both return the first failure, or null; a sink returning false stops the tokenizer quietly. */
export interface XmlTokenizer {
  write(text: string): XmlFailure | null
  end(): XmlFailure | null
}

// XML 1.0 §2.3 names, simplified: ASCII letters, digits, `_ - . :`, and everything non-ASCII.
const NAME_START = new Uint8Array(128)
const NAME_CHAR = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 58
  NAME_START[c] = letter ? 1 : 0
  NAME_CHAR[c] = letter || (c >= 48 && c <= 57) || c === 45 || c === 46 ? 1 : 0
}
const isNameStart = (c: number) => (c < 128 ? NAME_START[c] === 1 : true)
const isNameChar = (c: number) => (c < 128 ? NAME_CHAR[c] === 1 : true)
const isSpace = (c: number) => c === 32 || c === 10 || c === 9 || c === 13

const INCOMPLETE = -1
const LITERAL = -2

/**
 * The index of the `>` ending a start tag whose name ends at nameEnd: INCOMPLETE when the buffer
 * ends first, LITERAL when this is not a well-formed tag (XML 1.0 §3.1).
 */
function scanAttributes(buf: string, nameEnd: number): number {
  const n = buf.length
  let k = nameEnd
  for (;;) {
    while (k < n && isSpace(buf.charCodeAt(k))) k++
    if (k >= n) return INCOMPLETE
    const c = buf.charCodeAt(k)
    if (c === 62) return k
    if (c === 47) return k + 1 >= n ? INCOMPLETE : buf.charCodeAt(k + 1) === 62 ? k + 1 : LITERAL
    // An attribute must follow white space.
    if (!isNameStart(c) || !isSpace(buf.charCodeAt(k - 1))) return LITERAL
    while (k < n && isNameChar(buf.charCodeAt(k))) k++
    while (k < n && isSpace(buf.charCodeAt(k))) k++
    if (k >= n) return INCOMPLETE
    if (buf.charCodeAt(k) !== 61) return LITERAL
    k++
    while (k < n && isSpace(buf.charCodeAt(k))) k++
    if (k >= n) return INCOMPLETE
    const quote = buf.charCodeAt(k)
    if (quote !== 34 && quote !== 39) return LITERAL
    const close = buf.indexOf(quote === 34 ? '"' : "'", k + 1)
    if (close === -1) return INCOMPLETE
    k = close + 1
  }
}

export function createXmlTokenizer(sink: XmlSink, limits: XmlLimits): XmlTokenizer {
  const text: XmlText = { source: '', start: 0, end: 0, decoded: false }
  let buf = ''
  /** Where the search for the next `<` resumes. */
  let scan = 0
  /** Start of the current element's pending direct text in buf (after the last markup). */
  let textFrom = 0
  /** Direct text already taken out of buf, decoded (split by a comment, CDATA or PI). */
  let parts = ''
  /** Characters of the current text run already dropped (mixed content, outside the root). */
  let dropped = 0
  /** The current element has had no child element yet: its text is its value. */
  let leaf = false
  let elements = 0
  let stopped = false
  /** Open elements: qualified names to match end tags, local names for the sink. */
  const stack: string[] = []
  const names: string[] = []

  const tooLong = (what: string): XmlFailure => ({
    code: 'limit_exceeded',
    message: `${what} is longer than ${limits.maxTextLength} characters`,
  })

  /** Takes buf[textFrom, to) as text of the current element (or drops it outside a leaf). */
  function takeText(to: number): XmlFailure | null {
    if (leaf) {
      if (to > textFrom) parts += decodeText(buf.slice(textFrom, to))
      if (parts.length > limits.maxTextLength) return tooLong('element text')
    } else {
      dropped += to - textFrom
      if (dropped > limits.maxTextLength) return tooLong('text')
    }
    return null
  }

  function endTag(lt: number, final: boolean): number | XmlFailure {
    // The common `</name>` is matched in place, without slicing.
    const open = stack.length === 0 ? '' : stack[stack.length - 1]!
    let gt = lt + 2 + open.length
    if (open === '' || buf.charCodeAt(gt) !== 62 || !buf.startsWith(open, lt + 2)) {
      gt = buf.indexOf('>', lt + 2)
      if (gt === -1) return carry(lt, final) ?? INCOMPLETE
      const qname = buf.slice(lt + 2, gt).trimEnd()
      if (qname !== open || open === '') {
        const expected = open === '' ? 'no open element' : `</${open}>`
        return { code: 'not_xml', message: `end tag </${qname}> where ${expected} was expected` }
      }
    }
    stack.pop()
    const name = names.pop()!
    let value: XmlText | null = null
    if (leaf) {
      if (parts === '') {
        text.source = buf
        text.start = textFrom
        text.end = lt
        text.decoded = false
      } else {
        text.source = parts + decodeText(buf.slice(textFrom, lt))
        text.start = 0
        text.end = text.source.length
        text.decoded = true
      }
      if (text.end - text.start > limits.maxTextLength) return tooLong('element text')
      value = text
    } else if (dropped + lt - textFrom > limits.maxTextLength) return tooLong('text')
    leaf = false
    parts = ''
    dropped = 0
    textFrom = gt + 1
    if (!sink.close(name, value)) stopped = true
    return gt + 1
  }

  function startTag(lt: number, final: boolean): number | XmlFailure {
    const n = buf.length
    let colon = -1
    let k = lt + 1
    for (; k < n; k++) {
      const c = buf.charCodeAt(k)
      if (!isNameChar(c)) break
      if (c === 58) colon = k
    }
    const gt = k >= n ? INCOMPLETE : buf.charCodeAt(k) === 62 ? k : scanAttributes(buf, k)
    if (gt === INCOMPLETE) return carry(lt, final) ?? INCOMPLETE
    // Recovery: not a tag, so a literal `<` in the text.
    if (gt === LITERAL) return lt + 1
    if (++elements > limits.maxElements) {
      return { code: 'limit_exceeded', message: `more than ${limits.maxElements} elements` }
    }
    if (stack.length >= limits.maxDepth) {
      return { code: 'limit_exceeded', message: `elements nested deeper than ${limits.maxDepth}` }
    }
    // Text before a child element is mixed content: it is not the parent's value.
    if (!leaf && dropped + lt - textFrom > limits.maxTextLength) return tooLong('text')
    const localStart = colon === -1 ? lt + 1 : colon + 1
    const name = buf.slice(localStart, k)
    const prefix = colon === -1 ? '' : buf.slice(lt + 1, colon)
    const selfClosing = buf.charCodeAt(gt - 1) === 47
    const attributes = gt === k ? '' : buf.slice(k, selfClosing ? gt - 1 : gt)
    parts = ''
    dropped = 0
    textFrom = gt + 1
    if (selfClosing) {
      leaf = false
      text.source = ''
      text.start = text.end = 0
      text.decoded = true
      if (!sink.open(name, attributes, prefix) || !sink.close(name, text)) stopped = true
    } else {
      stack.push(colon === -1 ? name : buf.slice(lt + 1, k))
      names.push(name)
      leaf = true
      if (!sink.open(name, attributes, prefix)) stopped = true
    }
    return gt + 1
  }

  /** Comments, CDATA, PIs (including the XML declaration); a DOCTYPE is refused. */
  function otherMarkup(lt: number, final: boolean): number | XmlFailure {
    let close: number
    let end: number
    if (buf.charCodeAt(lt + 1) === 63) {
      close = buf.indexOf('?>', lt + 2)
      end = close + 2
    } else if (buf.startsWith('<!--', lt)) {
      close = buf.indexOf('-->', lt + 4)
      end = close + 3
    } else if (buf.startsWith('<![CDATA[', lt)) {
      close = buf.indexOf(']]>', lt + 9)
      if (close === -1) return carry(lt, final) ?? INCOMPLETE
      const failed = takeText(lt)
      if (failed !== null) return failed
      if (leaf) parts += normalizeNewlines(buf.slice(lt + 9, close))
      else dropped += close - lt - 9
      textFrom = close + 3
      return close + 3
    } else if (buf.startsWith('<!DOCTYPE', lt)) {
      return { code: 'not_xml', message: 'DOCTYPE declarations are refused (no DTD, no entity expansion)' }
    } else if (buf.length - lt < 9 && !final) {
      return carry(lt, final) ?? INCOMPLETE
    } else {
      return { code: 'not_xml', message: `unsupported markup ${JSON.stringify(buf.slice(lt, lt + 9))}` }
    }
    if (close === -1) return carry(lt, final) ?? INCOMPLETE
    // It splits the text but adds nothing to it.
    const failed = takeText(lt)
    if (failed !== null) return failed
    textFrom = end
    return end
  }

  function run(final: boolean): XmlFailure | null {
    const n = buf.length
    let i = scan
    while (!stopped) {
      const lt = i < n ? buf.indexOf('<', i) : -1
      if (lt === -1) return carry(n, final)
      if (lt + 1 >= n) return carry(lt, final)
      const c = buf.charCodeAt(lt + 1)
      const next =
        c === 47
          ? endTag(lt, final)
          : c === 33 || c === 63
            ? otherMarkup(lt, final)
            : isNameStart(c)
              ? startTag(lt, final)
              : lt + 1 // Recovery: a literal `<`.
      if (typeof next !== 'number') return next
      // The buffer ended inside markup: carry() has kept what is needed.
      if (next === INCOMPLETE) return null
      i = next
    }
    return null
  }

  /**
   * The buffer ends before the markup at `markup` is complete (markup === buf.length: none is
   * pending). Keeps what is still needed, bounded by maxTextLength; null when all is well.
   */
  function carry(markup: number, final: boolean): XmlFailure | null {
    if (final && markup < buf.length) return { code: 'not_xml', message: 'the input ends inside markup' }
    if (buf.length - markup > limits.maxTextLength + 16) return tooLong('markup')
    if (leaf) {
      if (parts.length + (markup - textFrom) > limits.maxTextLength) return tooLong('element text')
      buf = buf.slice(textFrom)
      scan = markup - textFrom
    } else {
      dropped += markup - textFrom
      if (dropped > limits.maxTextLength) return tooLong('text')
      buf = buf.slice(markup)
      scan = 0
    }
    textFrom = 0
    return null
  }

  return {
    write(chunk) {
      if (stopped || chunk.length === 0) return null
      buf = buf.length === 0 ? chunk : buf + chunk
      return run(false)
    },
    end() {
      return stopped ? null : run(true)
    },
  }
}
