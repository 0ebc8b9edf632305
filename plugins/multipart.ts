// multipart/form-data (RFC 7578 over RFC 2046 §5.1) read as a stream: parts come out one at a time,
// each body as a stream of its bytes, so a file upload is never held whole (docs/ingestion.md,
// "Memory"). The body parser (body-limit.ts) reads a form's text fields before its first file with
// readFormHead; the route that takes the files reads them with formParts.

export class MultipartError extends Error {}

export interface FormPart {
  name: string
  /** The file's name (maybe empty) for a file input's part; null for a text field. */
  filename: string | null
  /** The part's bytes. Read them before asking for the next part: unread ones are skipped then. */
  body: AsyncIterable<Uint8Array>
}

/** A part's header block is a few lines; a longer one is no form a browser sends. */
const MAX_HEADER_BYTES = 16 * 1024
const CRLF = Buffer.from('\r\n')
const BLANK_LINE = Buffer.from('\r\n\r\n')

/** The boundary parameter of a multipart Content-Type (1-70 characters, RFC 2046 §5.1.1), or null. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType)
  return match ? (match[1] ?? match[2]!) : null
}

/** Name and filename of Content-Disposition. Browsers percent-encode `"` in names, never `\`-escape. */
function dispositionOf(headers: string): { name: string; filename: string | null } {
  const line = headers.split('\r\n').find((l) => /^content-disposition\s*:/i.test(l)) ?? ''
  const params = new Map<string, string>()
  for (const match of line.matchAll(/;\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*(?:"([^"]*)"|([^;\s]*))/g))
    params.set(match[1]!.toLowerCase(), match[2] ?? match[3]!)
  return { name: params.get('name') ?? '', filename: params.get('filename') ?? null }
}

/** The parts of a multipart body, in order; throws MultipartError on a malformed or cut-off body. */
export async function* formParts(
  source: AsyncIterable<Uint8Array>,
  boundary: string,
): AsyncGenerator<FormPart> {
  const chunks = source[Symbol.asyncIterator]()
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  // A CRLF in front lets a delimiter at the very start match like every later one (after a CRLF).
  let buffer = Buffer.from(CRLF)
  const more = async (what: string) => {
    const next = await chunks.next()
    if (next.done) throw new MultipartError(`the body ends inside ${what}`)
    buffer = Buffer.concat([buffer, next.value])
  }
  // Bytes of the current part, up to its closing delimiter. A new generator resumes where the last
  // one stopped, so a part the caller left half read can be skipped.
  let partDone = true
  async function* partBody(): AsyncGenerator<Uint8Array> {
    while (!partDone) {
      const at = buffer.indexOf(delimiter)
      if (at >= 0) {
        const piece = buffer.subarray(0, at)
        buffer = buffer.subarray(at + delimiter.length)
        partDone = true
        if (piece.byteLength > 0) yield piece
        return
      }
      // All but a tail that could be the start of a delimiter cut by the chunk's end.
      const keep = delimiter.byteLength - 1
      if (buffer.byteLength > keep) {
        const piece = buffer.subarray(0, buffer.byteLength - keep)
        buffer = buffer.subarray(buffer.byteLength - keep)
        yield piece
      }
      await more('a part')
    }
  }
  // The preamble, before the first delimiter, is ignored (RFC 2046 §5.1.1).
  for (let at = buffer.indexOf(delimiter); at < 0; at = buffer.indexOf(delimiter)) {
    buffer = buffer.subarray(Math.max(0, buffer.byteLength - delimiter.byteLength + 1))
    await more('the preamble')
  }
  buffer = buffer.subarray(buffer.indexOf(delimiter) + delimiter.byteLength)
  for (;;) {
    while (buffer.byteLength < 2) await more('a delimiter')
    // `--` after the boundary closes the body; what follows (the epilogue) is not read.
    if (buffer[0] === 0x2d && buffer[1] === 0x2d) return
    let end = buffer.indexOf(BLANK_LINE)
    while (end < 0) {
      if (buffer.byteLength > MAX_HEADER_BYTES) throw new MultipartError('a part header is too long')
      await more('a part header')
      end = buffer.indexOf(BLANK_LINE)
    }
    // The delimiter line: optional white space (transport padding), then CRLF; then the headers.
    const lineEnd = buffer.indexOf(CRLF)
    if (!/^[ \t]*$/.test(buffer.subarray(0, lineEnd).toString('latin1')))
      throw new MultipartError('a boundary is followed by other text')
    const headers = buffer.subarray(lineEnd + 2, end + 2).toString('utf8')
    buffer = buffer.subarray(end + 4)
    partDone = false
    yield { ...dispositionOf(headers), body: { [Symbol.asyncIterator]: partBody } }
    for await (const _ of partBody()) {
      // skipped: the caller did not read it
    }
  }
}

/**
 * A multipart form whose files are still to be read: its text fields before the first file, and
 * the whole body, from its first byte, for the route that takes the files (formParts over `body`).
 */
export class StreamedForm extends FormData {
  constructor(
    readonly boundary: string,
    readonly body: AsyncIterable<Uint8Array>,
  ) {
    super()
  }
}

export type FormHead =
  | { ok: true; form: StreamedForm }
  | { ok: false; problem: 'malformed' | 'too_large' | 'not_utf8' }

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** The text of UTF-8 bytes, or null where they are not UTF-8 (never read as U+FFFD). */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return UTF8.decode(bytes)
  } catch {
    return null
  }
}

/**
 * Reads a form's text fields up to its first file part (the CSRF token is one), at most
 * `maxHeadBytes` of the body plus the chunk that passes it; the body's later bytes stay unread in
 * the stream. A field that is not UTF-8 is refused, as in any other body (docs/api.md).
 */
export async function readFormHead(
  stream: ReadableStream<Uint8Array> | null,
  contentType: string,
  maxHeadBytes: number,
): Promise<FormHead> {
  const boundary = boundaryOf(contentType)
  if (stream === null || boundary === null) return { ok: false, problem: 'malformed' }
  const chunks = stream[Symbol.asyncIterator]()
  // Chunks read here are handed to the route again (request bodies hand out chunks they own).
  const seen: Uint8Array[] = []
  let size = 0
  const tooLarge = new Error('head too large')
  async function* recorded(): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (size > maxHeadBytes) throw tooLarge
      const next = await chunks.next()
      if (next.done) return
      size += next.value.byteLength
      seen.push(next.value)
      yield next.value
    }
  }
  async function* replayed(): AsyncGenerator<Uint8Array> {
    yield* seen.splice(0)
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value
  }
  const form = new StreamedForm(boundary, replayed())
  try {
    for await (const part of formParts(recorded(), boundary)) {
      if (part.filename !== null) break
      const text = utf8Text(Buffer.concat(await Array.fromAsync(part.body)))
      if (text === null) return { ok: false, problem: 'not_utf8' }
      form.append(part.name, text)
    }
  } catch (error) {
    if (error === tooLarge) return { ok: false, problem: 'too_large' }
    if (error instanceof MultipartError) return { ok: false, problem: 'malformed' }
    throw error
  }
  return { ok: true, form }
}
