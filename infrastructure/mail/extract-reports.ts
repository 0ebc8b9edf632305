import { type Attachment, type Headers, type ParsedMail, simpleParser } from 'mailparser'
import {
  asExtractionError,
  type ExtractFailure,
  type ExtractLimits,
  limitExceeded,
} from './extraction-failure.ts'
import { failureReportParts, isFailureReport, isFeedbackPart } from './failure-parts.ts'
import {
  addPartPayloads,
  addTextPayload,
  type PartDescription,
  type PayloadSink,
  type ReportPayload,
  type SkippedPart,
  sliceStream,
} from './report-payloads.ts'
import { sniffFormat } from './sniff.ts'

// Takes the report payloads out of a raw RFC 5322 message: DMARC aggregate XML (RFC 7489 §7.2.1.1,
// RFC 9990), TLS-RPT JSON (RFC 8460 §5.3) and failure reports (RFC 5965, RFC 6591, RFC 9991).
// mailparser walks the MIME tree and undoes base64 and quoted-printable; everything it buffers is
// bounded by the message itself. Decompression happens only when a payload is opened, as a stream
// with its limits checked on every chunk, so a bomb costs the time to reach the limit, not memory.

export interface ExtractedReports {
  payloads: ReportPayload[]
  /** Parts that looked like reports but could not be used (corrupt archive, limit), with the reason. */
  skipped: SkippedPart[]
}

export type ExtractResult = { ok: true; value: ExtractedReports } | { ok: false; reason: ExtractFailure }

// Reports forwarded as attachments (message/rfc822) are looked into, this many levels deep.
const MAX_EMBEDDED_DEPTH = 3
const EMBEDDED_TYPES = ['message/rfc822', 'message/global']

interface Walk extends PayloadSink {
  limits: ExtractLimits
  /** MIME parts seen so far, over the message and the messages embedded in it. */
  parts: number
}

export async function extractReports(raw: Uint8Array, limits: ExtractLimits): Promise<ExtractResult> {
  const walk: Walk = { limits, parts: 0, payloads: [], skipped: [] }
  // A bare report (POST /ingest/reports, `cli import`, an upload) is stored as it came: its first
  // bytes are a report's (sniff.ts), which no RFC 5322 message starts with (file-kind.ts). It is
  // read like one attachment, under the same limits.
  if (sniffFormat(raw) !== null) {
    const part = { filename: null, contentType: 'application/octet-stream' }
    try {
      await addPartPayloads(walk, raw, part, limits)
    } catch (error) {
      walk.skipped.push({ ...part, entryName: null, reason: asExtractionError(error, 'reading').reason })
    }
  } else {
    const failure = await collect(raw, 0, walk)
    if (failure !== null) return { ok: false, reason: failure }
  }
  if (walk.payloads.length > 0) return { ok: true, value: { payloads: walk.payloads, skipped: walk.skipped } }
  // Nothing usable: the most telling reason is a part that failed, rather than "nothing there".
  const problem = walk.skipped.find((part) => part.reason.code !== 'no_report_found') ?? walk.skipped[0]
  return {
    ok: false,
    reason: problem?.reason ?? {
      code: 'no_report_found',
      message: 'the message holds no DMARC aggregate report, TLS-RPT report or failure report',
    },
  }
}

type Parsed = { ok: true; parsed: ParsedMail } | { ok: false; reason: ExtractFailure }

async function parseMime(raw: Uint8Array, maxParts: number, limits: ExtractLimits): Promise<Parsed> {
  try {
    const parsed = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
      // Embedded messages stay attachments: an ARF part's original message must not be mistaken for
      // part of the report, and a forwarded report is parsed on its own (collect, below).
      ignoreEmbedded: true,
      maxChildNodes: maxParts,
      checksumAlgo: false,
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      keepCidLinks: true,
    })
    return { ok: true, parsed }
  } catch (error) {
    const message = (error as Error)?.message ?? String(error)
    if ((error as { code?: string })?.code === 'EMAXLEN') {
      if (/child nodes/i.test(message)) return { ok: false, reason: tooManyParts(limits) }
      return {
        ok: false,
        reason: limitExceeded('mime_header_bytes', `a MIME header block is too large: ${message}`),
      }
    }
    return {
      ok: false,
      reason: { code: 'malformed_mime', message: `the message cannot be parsed: ${message}` },
    }
  }
}

function tooManyParts(limits: ExtractLimits): ExtractFailure {
  return limitExceeded('mime_parts', `the message has more than ${limits.maxParts} MIME parts`)
}

/** Collects the payloads of one message; returns a failure only when the whole message must be refused. */
async function collect(raw: Uint8Array, depth: number, walk: Walk): Promise<ExtractFailure | null> {
  const remaining = walk.limits.maxParts - walk.parts
  if (remaining <= 0) return tooManyParts(walk.limits)
  const result = await parseMime(raw, remaining, walk.limits)
  if (!result.ok) return result.reason
  const { parsed } = result
  walk.parts += parsed.attachments.length + 1
  if (walk.parts > walk.limits.maxParts) return tooManyParts(walk.limits)

  if (isFailureReport(parsed)) {
    walk.payloads.push(feedbackPayload(parsed))
    return null
  }
  const before = walk.payloads.length
  for (const attachment of parsed.attachments) {
    const part = describe(attachment)
    if (EMBEDDED_TYPES.includes(attachment.contentType.toLowerCase())) {
      if (depth >= MAX_EMBEDDED_DEPTH) continue
      const failure = await collect(attachment.content, depth + 1, walk)
      if (failure?.code === 'limit_exceeded') return failure
      if (failure !== null) walk.skipped.push({ ...part, entryName: null, reason: failure })
      continue
    }
    try {
      await addPartPayloads(walk, attachment.content, part, walk.limits)
    } catch (error) {
      // Decompression errors are values already; this is the guard for anything unforeseen.
      walk.skipped.push({ ...part, entryName: null, reason: asExtractionError(error, 'reading').reason })
    }
  }
  // RFC 7489 §7.2.1.1 wants an attachment, but some senders put the report in the body itself.
  if (walk.payloads.length === before && parsed.text) {
    // mailparser joins the inline text parts, so the part's own type is gone: it was text/plain.
    addTextPayload(walk, parsed.text, 'text/plain', walk.limits)
  }
  return null
}

function declaredType(headers: Headers, fallback: string): string {
  const value = headers.get('content-type')
  if (typeof value === 'object' && value !== null && 'value' in value && typeof value.value === 'string') {
    return value.value.toLowerCase()
  }
  return fallback
}

function describe(attachment: Attachment): PartDescription {
  return {
    filename: attachment.filename ?? null,
    contentType: declaredType(attachment.headers, attachment.contentType.toLowerCase()),
  }
}

function feedbackPayload(parsed: ParsedMail): ReportPayload {
  const part = parsed.attachments.find(isFeedbackPart)
  const bytes: Uint8Array = part?.content ?? new Uint8Array(0)
  return {
    kind: 'feedback-report',
    filename: part?.filename ?? null,
    entryName: null,
    contentType: part ? describe(part).contentType : declaredType(parsed.headers, 'multipart/report'),
    compression: 'none',
    parts: failureReportParts(parsed),
    open: () => sliceStream(bytes),
  }
}

export type ReadAllResult = { ok: true; value: Uint8Array } | { ok: false; reason: ExtractFailure }

/** Reads a small payload (a TLS-RPT JSON report) into memory, refusing more than `limit` bytes. */
export async function readAll(source: AsyncIterable<Uint8Array>, limit: number): Promise<ReadAllResult> {
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for await (const chunk of source) {
      total += chunk.byteLength
      if (total > limit) {
        return {
          ok: false,
          reason: limitExceeded('decompressed_bytes', `the payload is larger than ${limit} bytes`),
        }
      }
      chunks.push(chunk)
    }
  } catch (error) {
    return { ok: false, reason: asExtractionError(error, 'reading').reason }
  }
  const value = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    value.set(chunk, at)
    at += chunk.byteLength
  }
  return { ok: true, value }
}

export type { ExtractFailure, ExtractLimits } from './extraction-failure.ts'
export { ExtractionError } from './extraction-failure.ts'
export type { DataPayload, FeedbackPayload, ReportPayload, SkippedPart } from './report-payloads.ts'
