import type { FailureReportParts } from '../../domain/reports/forensic.ts'
import { ChunkReader } from './chunk-reader.ts'
import {
  asExtractionError,
  decompressionFailed,
  type ExtractFailure,
  ExtractionError,
  type ExtractLimits,
  limitExceeded,
  outputLimitBroken,
} from './extraction-failure.ts'
import { gunzipStream } from './gzip-stream.ts'
import { SNIFF_BYTES, sniffFormat } from './sniff.ts'
import { zipEntries } from './zip-stream.ts'

// One MIME part's bytes → the report payloads in it, as the part streams past: nothing of a part
// is held beyond the few KB the format is told from. The format comes from the bytes (after
// decompression, for an archive), never from the part's name or type.

export type Compression = 'gzip' | 'zip' | 'none'

interface PayloadBase {
  /** The MIME part's file name, when it named one. */
  filename: string | null
  /** The entry's name, for a payload taken out of a zip archive. */
  entryName: string | null
  /** The Content-Type the sender declared for the part (often wrong; informative only). */
  contentType: string
  compression: Compression
  /**
   * The payload's (decompressed) bytes, read as the message is: a payload of a streamed message
   * can be opened once, while it is being handed over. Throws ExtractionError
   * (decompression_failed, limit_exceeded) while streaming.
   */
  open(): AsyncIterable<Uint8Array>
}

export interface DataPayload extends PayloadBase {
  kind: 'aggregate-xml' | 'tls-rpt-json'
}

export interface FeedbackPayload extends PayloadBase {
  kind: 'feedback-report'
  /** The ARF pieces, for domain/reports/forensic.ts parseFailureReport. `open()` streams the feedback-report part. */
  parts: FailureReportParts
}

export type ReportPayload = DataPayload | FeedbackPayload

export type ReportKind = ReportPayload['kind']

export interface PartDescription {
  filename: string | null
  contentType: string
}

/** A part that looked like a report (or an archive) but could not be used, and why. */
export interface SkippedPart extends PartDescription {
  entryName: string | null
  reason: ExtractFailure
}

export interface PayloadSink {
  /** Hands a payload over; resolves once it has been read (or left), before the message goes on. */
  hand(payload: ReportPayload): Promise<void>
  skipped: SkippedPart[]
}

const SLICE = 64 * 1024

export async function* sliceStream(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += SLICE) yield bytes.subarray(at, at + SLICE)
}

const KIND: Record<'xml' | 'json', DataPayload['kind']> = { xml: 'aggregate-xml', json: 'tls-rpt-json' }

/** A stream that can be opened once: payloads of a streamed message are read as the message is. */
function once(stream: AsyncIterable<Uint8Array>): () => AsyncIterable<Uint8Array> {
  let opened = false
  return () => {
    if (opened) throw new Error('a payload of a streamed message can be read once')
    opened = true
    return stream
  }
}

/** The bytes again: the ones already read, then the rest of the iterator. */
async function* replay(
  head: Uint8Array[],
  rest: AsyncIterator<Uint8Array> | null,
): AsyncGenerator<Uint8Array> {
  yield* head
  if (rest === null) return
  for (;;) {
    const next = await rest.next()
    if (next.done) return
    yield next.value
  }
}

type Head =
  | { ok: true; chunks: Uint8Array[]; bytes: Uint8Array; ended: boolean }
  | { ok: false; reason: ExtractFailure }

/** The first SNIFF_BYTES of a (decompressing) stream, and what was read to get them. */
async function readHead(iterator: AsyncIterator<Uint8Array>): Promise<Head> {
  const chunks: Uint8Array[] = []
  const head = new Uint8Array(SNIFF_BYTES)
  let filled = 0
  try {
    while (filled < SNIFF_BYTES) {
      const next = await iterator.next()
      if (next.done) return { ok: true, chunks, bytes: head.subarray(0, filled), ended: true }
      chunks.push(next.value)
      const take = Math.min(next.value.byteLength, SNIFF_BYTES - filled)
      head.set(next.value.subarray(0, take), filled)
      filled += take
    }
  } catch (error) {
    return { ok: false, reason: asExtractionError(error, 'decompressing').reason }
  }
  return { ok: true, chunks, bytes: head, ended: false }
}

/**
 * A gzip attachment may hold one more gzip ("gzipped twice", as tierpod/dmarc-report-converter
 * accepts): its limits, and how many of the attachment's own bytes have been read.
 */
interface SecondGzip {
  limits: ExtractLimits
  attachmentBytes: () => number
}

/**
 * The inner gzip's output, held to the limits against the attachment's bytes: gunzipStream judges
 * the ratio against its own input (the outer gzip's output), and two levels multiply.
 */
async function* againstAttachment(source: AsyncIterable<Uint8Array>, second: SecondGzip) {
  let total = 0
  for await (const chunk of source) {
    total += chunk.byteLength
    const broken = outputLimitBroken(total, second.attachmentBytes(), second.limits)
    if (broken) throw new ExtractionError(broken)
    yield chunk
  }
}

/**
 * A compressed payload: its format is told from its first decompressed bytes, and a report is
 * handed over as the decompression goes on (errors past the head surface in its stream). `second`
 * is set while one more gzip level may be unpacked; deeper nesting is refused.
 */
async function addCompressed(
  sink: PayloadSink,
  part: PartDescription & { entryName: string | null; compression: 'gzip' | 'zip' },
  stream: AsyncIterable<Uint8Array>,
  second: SecondGzip | null = null,
): Promise<void> {
  const iterator = stream[Symbol.asyncIterator]()
  try {
    const head = await readHead(iterator)
    const format = head.ok ? sniffFormat(head.bytes) : null
    if (!head.ok) {
      sink.skipped.push({ ...part, reason: head.reason })
    } else if (format === 'xml' || format === 'json') {
      const rest = head.ended ? null : iterator
      await sink.hand({ ...part, kind: KIND[format], open: once(replay(head.chunks, rest)) })
    } else if (format === 'gzip' && second !== null) {
      const inner = gunzipStream(replay(head.chunks, head.ended ? null : iterator), second.limits)
      await addCompressed(sink, part, againstAttachment(inner, second))
    } else if (format === 'gzip' || format === 'zip') {
      // A gzip part without `second` is the inner gzip of a gzip: what it holds is a third level.
      const outer = part.compression === 'gzip' && second === null ? 'gzip inside a gzip' : part.compression
      const reason = decompressionFailed(`a ${format} archive inside a ${outer} archive is not unpacked`)
      sink.skipped.push({ ...part, reason })
    } else {
      const reason: ExtractFailure = {
        code: 'no_report_found',
        message: `the ${part.compression} payload holds neither XML nor JSON`,
      }
      sink.skipped.push({ ...part, reason })
    }
  } finally {
    await iterator.return?.()
  }
}

/** An uncompressed payload, refused (in its stream) past the size limit. */
async function* capped(source: AsyncIterable<Uint8Array>, limit: number): AsyncGenerator<Uint8Array> {
  let total = 0
  for await (const chunk of source) {
    total += chunk.byteLength
    if (total > limit) {
      throw new ExtractionError(
        limitExceeded('decompressed_bytes', `the payload is larger than the limit of ${limit} bytes`),
      )
    }
    yield chunk
  }
}

/**
 * Hands over the report payloads found in one part's decoded bytes, as they stream past; parts
 * that are no report are left unread (the caller drains them).
 */
export async function addPartPayloads(
  sink: PayloadSink,
  content: AsyncIterable<Uint8Array>,
  part: PartDescription,
  limits: ExtractLimits,
): Promise<void> {
  const reader = new ChunkReader(content)
  const format = sniffFormat(await reader.peek(SNIFF_BYTES))
  if (format === null) return
  if (format === 'xml' || format === 'json') {
    await sink.hand({
      ...part,
      kind: KIND[format],
      entryName: null,
      compression: 'none',
      open: once(capped(reader.stream(), limits.maxDecompressedBytes)),
    })
    return
  }
  if (format === 'gzip') {
    await addCompressed(
      sink,
      { ...part, entryName: null, compression: 'gzip' },
      gunzipStream(reader.stream(), limits),
      { limits, attachmentBytes: () => reader.pulled },
    )
    return
  }
  let files = 0
  try {
    for await (const entry of zipEntries(reader.stream(), limits)) {
      if (entry.name.endsWith('/')) continue
      files++
      await addCompressed(sink, { ...part, entryName: entry.name, compression: 'zip' }, entry.chunks)
    }
  } catch (error) {
    sink.skipped.push({ ...part, entryName: null, reason: asExtractionError(error, 'zip').reason })
    return
  }
  if (files === 0) {
    sink.skipped.push({
      ...part,
      entryName: null,
      reason: decompressionFailed('the zip archive has no files'),
    })
  }
}

const encoder = new TextEncoder()

/**
 * A report pasted into the message text rather than attached: XML from its declaration or root
 * element to the closing </feedback>, or a JSON object that has the RFC 8460 §4 members. Text
 * parts are decoded by then, so the bytes are re-encoded as UTF-8.
 */
export async function addTextPayload(
  sink: PayloadSink,
  text: string,
  contentType: string,
  limits: ExtractLimits,
): Promise<void> {
  const part = { filename: null, entryName: null, contentType, compression: 'none' as const }
  let bytes: Uint8Array | null = null
  let kind: DataPayload['kind'] = 'aggregate-xml'
  const xmlStart = text.search(/<\?xml|<feedback[\s>]/)
  if (xmlStart >= 0) {
    const close = text.lastIndexOf('</feedback>')
    const xml = close > xmlStart ? text.slice(xmlStart, close + '</feedback>'.length) : text.slice(xmlStart)
    if (xml.includes('<feedback')) bytes = encoder.encode(xml)
  }
  const jsonStart = bytes === null ? text.search(/^[ \t]*\{/m) : -1
  if (jsonStart >= 0) {
    const json = text.slice(jsonStart, text.lastIndexOf('}') + 1)
    if (/"policies"\s*:/.test(json) && /"report-id"\s*:/.test(json)) {
      bytes = encoder.encode(json)
      kind = 'tls-rpt-json'
    }
  }
  if (bytes === null) return
  if (bytes.byteLength > limits.maxDecompressedBytes) {
    const reason = limitExceeded(
      'decompressed_bytes',
      `the report in the message text is larger than the limit of ${limits.maxDecompressedBytes} bytes`,
    )
    sink.skipped.push({ ...part, reason })
    return
  }
  const body = bytes
  await sink.hand({ ...part, kind, open: () => sliceStream(body) })
}
