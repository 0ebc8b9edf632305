import type { FailureReportParts } from '../../domain/reports/forensic.ts'
import {
  asExtractionError,
  decompressionFailed,
  type ExtractFailure,
  type ExtractLimits,
  limitExceeded,
} from './extraction-failure.ts'
import { gunzipStream } from './gzip-stream.ts'
import { SNIFF_BYTES, type SniffedFormat, sniffFormat } from './sniff.ts'
import { listZipEntries, unzipEntryStream } from './zip-stream.ts'

// One MIME part's bytes → the report payloads in it. The format comes from the bytes (after
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
   * The payload's (decompressed) bytes. Can be called again for a fresh stream. Throws
   * ExtractionError (decompression_failed, limit_exceeded) while streaming.
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
  payloads: ReportPayload[]
  skipped: SkippedPart[]
}

const SLICE = 64 * 1024

export async function* sliceStream(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += SLICE) yield bytes.subarray(at, at + SLICE)
}

const KIND: Record<'xml' | 'json', DataPayload['kind']> = { xml: 'aggregate-xml', json: 'tls-rpt-json' }

type Peek = { ok: true; format: SniffedFormat | null } | { ok: false; reason: ExtractFailure }

/** The format of a compressed payload, from its first decompressed bytes; the stream is closed after. */
async function peekFormat(open: () => AsyncIterable<Uint8Array>): Promise<Peek> {
  const head = new Uint8Array(SNIFF_BYTES)
  let filled = 0
  const iterator = open()[Symbol.asyncIterator]()
  try {
    while (filled < SNIFF_BYTES) {
      const next = await iterator.next()
      if (next.done) break
      const take = Math.min(next.value.byteLength, SNIFF_BYTES - filled)
      head.set(next.value.subarray(0, take), filled)
      filled += take
    }
  } catch (error) {
    return { ok: false, reason: asExtractionError(error, 'decompressing').reason }
  } finally {
    await iterator.return?.()
  }
  return { ok: true, format: sniffFormat(head.subarray(0, filled)) }
}

async function addCompressed(
  sink: PayloadSink,
  part: PartDescription & { entryName: string | null; compression: 'gzip' | 'zip' },
  open: () => AsyncIterable<Uint8Array>,
): Promise<void> {
  const peek = await peekFormat(open)
  if (!peek.ok) {
    sink.skipped.push({ ...part, reason: peek.reason })
  } else if (peek.format === 'xml' || peek.format === 'json') {
    sink.payloads.push({ ...part, kind: KIND[peek.format], open })
  } else if (peek.format === 'gzip' || peek.format === 'zip') {
    const reason = decompressionFailed(
      `a ${peek.format} archive inside a ${part.compression} archive is not unpacked`,
    )
    sink.skipped.push({ ...part, reason })
  } else {
    const reason: ExtractFailure = {
      code: 'no_report_found',
      message: `the ${part.compression} payload holds neither XML nor JSON`,
    }
    sink.skipped.push({ ...part, reason })
  }
}

/** Adds the report payloads found in one part's decoded bytes; parts that are no report are ignored. */
export async function addPartPayloads(
  sink: PayloadSink,
  bytes: Uint8Array,
  part: PartDescription,
  limits: ExtractLimits,
): Promise<void> {
  const format = sniffFormat(bytes)
  if (format === null) return
  if (format === 'xml' || format === 'json') {
    if (bytes.byteLength > limits.maxDecompressedBytes) {
      const reason = limitExceeded(
        'decompressed_bytes',
        `the payload is larger than the limit of ${limits.maxDecompressedBytes} bytes`,
      )
      sink.skipped.push({ ...part, entryName: null, reason })
      return
    }
    sink.payloads.push({
      ...part,
      kind: KIND[format],
      entryName: null,
      compression: 'none',
      open: () => sliceStream(bytes),
    })
    return
  }
  if (format === 'gzip') {
    await addCompressed(sink, { ...part, entryName: null, compression: 'gzip' }, () =>
      gunzipStream(bytes, limits),
    )
    return
  }
  let entries: ReturnType<typeof listZipEntries>
  try {
    entries = listZipEntries(bytes, limits)
  } catch (error) {
    sink.skipped.push({ ...part, entryName: null, reason: asExtractionError(error, 'zip').reason })
    return
  }
  const files = entries.filter((entry) => !entry.name.endsWith('/'))
  if (files.length === 0) {
    sink.skipped.push({
      ...part,
      entryName: null,
      reason: decompressionFailed('the zip archive has no files'),
    })
  }
  for (const entry of files) {
    await addCompressed(sink, { ...part, entryName: entry.name, compression: 'zip' }, () =>
      unzipEntryStream(bytes, entry.index, limits),
    )
  }
}

const encoder = new TextEncoder()

/**
 * A report pasted into the message text rather than attached: XML from its declaration or root
 * element to the closing </feedback>, or a JSON object that has the RFC 8460 §4 members. Text
 * parts are decoded by then, so the bytes are re-encoded as UTF-8.
 */
export function addTextPayload(
  sink: PayloadSink,
  text: string,
  contentType: string,
  limits: ExtractLimits,
): void {
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
  sink.payloads.push({ ...part, kind, open: () => sliceStream(body) })
}
