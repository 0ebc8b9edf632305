import type { AttachmentStream } from 'mailparser'
import { isProseFailureReport } from '../../domain/reports/forensic-plain-text.ts'
import { ChunkReader, slices } from './chunk-reader.ts'
import {
  asExtractionError,
  type ExtractFailure,
  type ExtractLimits,
  limitExceeded,
  StoreFailure,
} from './extraction-failure.ts'
import { FailureParts, headersSayFailureReport, isFeedbackType } from './failure-parts.ts'
import { mimeFailure, mimeStream } from './mime-stream.ts'
import { contentOf, drain, keepingPrefix } from './part-streams.ts'
import {
  addPartPayloads,
  addTextPayload,
  type PartDescription,
  type PayloadSink,
  type ReportPayload,
  type SkippedPart,
  sliceStream,
} from './report-payloads.ts'
import { SNIFF_BYTES, sniffFormat } from './sniff.ts'

// Takes the report payloads out of a raw RFC 5322 message: DMARC aggregate XML (RFC 7489 §7.2.1.1,
// RFC 9990), TLS-RPT JSON (RFC 8460 §5.3) and failure reports (RFC 5965, RFC 6591, RFC 9991).
// The message streams through mailparser's MailParser (which undoes base64 and quoted-printable);
// each attachment streams on into the sniffer, gunzip or unzip, and a report found in it is handed
// to the caller while the parser waits, so a message of any size costs a few chunks of memory
// (docs/ingestion.md, "Memory"). Decompression limits are checked on every chunk, so a bomb costs
// the time to reach the limit, not memory.

export interface ExtractedReports {
  payloads: ReportPayload[]
  /** Parts that looked like reports but could not be used (corrupt archive, limit), with the reason. */
  skipped: SkippedPart[]
}

export type ExtractResult = { ok: true; value: ExtractedReports } | { ok: false; reason: ExtractFailure }

/** How a streamed message ended: how many payloads were handed over and what was skipped. */
export type StreamResult =
  | { ok: true; handed: number; skipped: SkippedPart[] }
  | { ok: false; reason: ExtractFailure }

// Reports forwarded as attachments (message/rfc822) are looked into, this many levels deep.
const MAX_EMBEDDED_DEPTH = 3
const EMBEDDED_TYPES = ['message/rfc822', 'message/global']

interface Walk {
  limits: ExtractLimits
  /** MIME parts seen so far, over the message and the messages embedded in it. */
  parts: number
  handed: number
  sink: PayloadSink
}

/**
 * Streams a message and hands each report payload to `each` as it is reached; the message is
 * read on once `each` resolves. A payload's stream is live: read it inside `each` or not at all.
 * A failure of the whole message (a MIME limit, unparseable MIME) can come after payloads were
 * handed over; it is returned all the same.
 */
export async function streamReports(
  source: AsyncIterable<Uint8Array>,
  limits: ExtractLimits,
  each: (payload: ReportPayload) => Promise<void>,
): Promise<StreamResult> {
  const skipped: SkippedPart[] = []
  const walk: Walk = { limits, parts: 0, handed: 0, sink: { skipped, hand: each } }
  walk.sink.hand = async (payload) => {
    walk.handed++
    try {
      await each(payload)
    } catch (error) {
      throw error instanceof StoreFailure ? error : new StoreFailure(error)
    }
  }
  try {
    return await walkMessage(fromStorage(source), walk, skipped)
  } catch (error) {
    if (error instanceof StoreFailure) throw error.error
    throw error
  }
}

/** The message's bytes, whose read errors are the storage's (StoreFailure), not the message's. */
async function* fromStorage(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* source
  } catch (error) {
    throw error instanceof StoreFailure ? error : new StoreFailure(error)
  }
}

async function walkMessage(
  source: AsyncIterable<Uint8Array>,
  walk: Walk,
  skipped: SkippedPart[],
): Promise<StreamResult> {
  const limits = walk.limits
  // A bare report (a report file rather than an email) is read like one attachment, under the
  // same limits: its first bytes are a report's (sniff.ts), which no RFC 5322 message starts with.
  const reader = new ChunkReader(source)
  if (sniffFormat(await reader.peek(SNIFF_BYTES)) !== null) {
    const part = { filename: null, contentType: 'application/octet-stream' }
    try {
      await addPartPayloads(walk.sink, reader.stream(), part, limits)
    } catch (error) {
      skipped.push({ ...part, entryName: null, reason: asExtractionError(error, 'reading').reason })
    }
  } else {
    const failure = await collect(reader.stream(), 0, walk)
    if (failure !== null) return { ok: false, reason: failure }
  }
  if (walk.handed > 0) return { ok: true, handed: walk.handed, skipped }
  // Nothing usable: the most telling reason is a part that failed, rather than "nothing there".
  const problem = skipped.find((part) => part.reason.code !== 'no_report_found') ?? skipped[0]
  return {
    ok: false,
    reason: problem?.reason ?? {
      code: 'no_report_found',
      message: 'the message holds no DMARC aggregate report, TLS-RPT report or failure report',
    },
  }
}

function tooManyParts(limits: ExtractLimits): ExtractFailure {
  return limitExceeded('mime_parts', `the message has more than ${limits.maxParts} MIME parts`)
}

/** Collects the payloads of one message; returns a failure only when the whole message must be refused. */
async function collect(
  source: AsyncIterable<Uint8Array>,
  depth: number,
  walk: Walk,
): Promise<ExtractFailure | null> {
  const remaining = walk.limits.maxParts - walk.parts
  if (remaining <= 0) return tooManyParts(walk.limits)
  walk.parts += 1
  const mime = mimeStream(source, { maxParts: remaining })
  const arf = new FailureParts()
  let failureReport = false
  let text: string | null = null
  const before = walk.handed
  try {
    for await (const item of mime.items) {
      failureReport ||= headersSayFailureReport(mime.headers())
      if (item.type === 'text') {
        text = item.text
        continue
      }
      const attachment = item.attachment
      walk.parts += 1
      if (walk.parts > walk.limits.maxParts) return tooManyParts(walk.limits)
      const part = describe(attachment)
      const type = attachment.contentType.toLowerCase()
      if (isFeedbackType(type)) failureReport = true
      let content = contentOf(attachment)
      const piece = arf.wants(type)
      if (piece !== null) {
        content = keepingPrefix(content, FailureParts.limit(piece), (bytes) =>
          arf.keep(piece, { filename: part.filename, type: part.contentType }, bytes),
        )
      }
      // A failure report's parts are only its ARF pieces (RFC 5965 §2): nothing in it is a report.
      if (failureReport) {
        await drain(content)
        continue
      }
      if (EMBEDDED_TYPES.includes(type)) {
        if (depth >= MAX_EMBEDDED_DEPTH) {
          await drain(content)
          continue
        }
        const failure = await collect(content, depth + 1, walk)
        if (failure?.code === 'limit_exceeded') return failure
        if (failure !== null) walk.sink.skipped.push({ ...part, entryName: null, reason: failure })
        await drain(content)
        continue
      }
      try {
        await addPartPayloads(walk.sink, content, part, walk.limits)
      } catch (error) {
        // Decompression errors are values already; this is the guard for anything unforeseen.
        walk.sink.skipped.push({
          ...part,
          entryName: null,
          reason: asExtractionError(error, 'reading').reason,
        })
      }
      await drain(content)
    }
  } catch (error) {
    return mimeFailure(error, walk.limits.maxParts)
  } finally {
    // A return from inside the loop leaves the parser: close it.
    await mime.items.return(undefined)
  }
  failureReport ||= headersSayFailureReport(mime.headers())
  // Exim sends its failure report as a plain single-part message (no multipart/report at all).
  failureReport ||=
    walk.handed === before && text !== null && isProseFailureReport(text, subjectOf(mime.headers()) ?? '')
  if (failureReport) {
    await walk.sink.hand(feedbackPayload(arf, text, subjectOf(mime.headers()), mime.headers()))
    return null
  }
  // RFC 7489 §7.2.1.1 wants an attachment, but some senders put the report in the body itself.
  if (walk.handed === before && text) {
    // mailparser joins the inline text parts, so the part's own type is gone: it was text/plain.
    await addTextPayload(walk.sink, text, 'text/plain', walk.limits)
  }
  return null
}

type HeaderMap = NonNullable<ReturnType<ReturnType<typeof mimeStream>['headers']>>

function declaredType(headers: HeaderMap | null, fallback: string): string {
  const value = headers?.get('content-type')
  if (typeof value === 'object' && value !== null && 'value' in value && typeof value.value === 'string') {
    return value.value.toLowerCase()
  }
  return fallback
}

function subjectOf(headers: HeaderMap | null): string | null {
  const subject = headers?.get('subject')
  return typeof subject === 'string' ? subject : null
}

function describe(attachment: AttachmentStream): PartDescription {
  return {
    filename: attachment.filename ?? null,
    contentType: declaredType(attachment.headers, attachment.contentType.toLowerCase()),
  }
}

function feedbackPayload(
  arf: FailureParts,
  text: string | null,
  subject: string | null,
  headers: HeaderMap | null,
): ReportPayload {
  const part = arf.feedback()
  const bytes = part?.bytes ?? new Uint8Array(0)
  return {
    kind: 'feedback-report',
    filename: part?.filename ?? null,
    entryName: null,
    contentType: part ? part.type : declaredType(headers, 'multipart/report'),
    compression: 'none',
    parts: arf.parts(text, subject),
    open: () => sliceStream(bytes),
  }
}

/**
 * The whole message in memory → every payload, each read into memory so it can be opened again
 * (for tests and tools; the worker streams with streamReports). A compressed payload whose stream
 * fails past its first bytes keeps the failure for its stream, as the live stream would throw it;
 * an uncompressed one can only fail by its size, which refuses it as before.
 */
export async function extractReports(raw: Uint8Array, limits: ExtractLimits): Promise<ExtractResult> {
  const payloads: ReportPayload[] = []
  const skippedLater: SkippedPart[] = []
  const result = await streamReports(slices(raw), limits, async (payload) => {
    const chunks: Uint8Array[] = []
    let failure: unknown = null
    try {
      for await (const chunk of payload.open()) chunks.push(chunk.slice())
    } catch (error) {
      failure = error
    }
    if (failure !== null && payload.compression === 'none') {
      skippedLater.push({ ...payload, reason: asExtractionError(failure, 'reading').reason })
      return
    }
    payloads.push({
      ...payload,
      open: async function* () {
        yield* chunks
        if (failure !== null) throw failure
      },
    })
  })
  if (!result.ok) return { ok: false, reason: result.reason }
  const skipped = [...result.skipped, ...skippedLater]
  if (payloads.length > 0) return { ok: true, value: { payloads, skipped } }
  const problem = skipped.find((part) => part.reason.code !== 'no_report_found') ?? skipped[0]
  return {
    ok: false,
    reason: problem?.reason ?? {
      code: 'no_report_found',
      message: 'the message holds no DMARC aggregate report, TLS-RPT report or failure report',
    },
  }
}

export type { ExtractFailure, ExtractLimits } from './extraction-failure.ts'
export { ExtractionError } from './extraction-failure.ts'
export { type ReadAllResult, readAll } from './read-all.ts'
export type { DataPayload, FeedbackPayload, ReportPayload, SkippedPart } from './report-payloads.ts'
