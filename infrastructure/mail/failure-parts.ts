import type { Headers } from 'mailparser'
import type { FailureReportParts } from '../../domain/reports/forensic.ts'

// Glue between mailparser and the pure failure-report parser: which parts of a message are the
// ARF pieces (RFC 5965 §2), as text. Parts stream past (extract-reports.ts); only a bounded
// prefix of each ARF piece is kept, and only the header section of the reported message is
// handed over; its body never leaves this file.

const FEEDBACK_TYPE = 'message/feedback-report'
// RFC 5965 §2 (d): the original is message/rfc822 or text/rfc822-headers; internationalised mail
// uses message/global (RFC 6532 §3.7) and message/global-headers (RFC 6533).
const ORIGINAL_MESSAGE_TYPES = ['message/rfc822', 'message/global']
const ORIGINAL_HEADER_TYPES = ['text/rfc822-headers', 'message/global-headers']

// The parts are small in any real report; anything past these sizes is not needed to read one.
const MAX_FEEDBACK_BYTES = 256 * 1024
const MAX_HEADER_BYTES = 256 * 1024
const MAX_TEXT_CHARS = 64 * 1024

const decoder = new TextDecoder('utf-8', { fatal: false })

export function isFeedbackType(contentType: string): boolean {
  return contentType.toLowerCase() === FEEDBACK_TYPE
}

/**
 * Whether the headers make the message a failure report: a multipart/report whose report-type is
 * feedback-report or missing (Exim sends no report-type and no ARF part). Other report types
 * (delivery-status, tlsrpt) are not. A feedback-report part anywhere also makes one (Netease sends
 * it inside multipart/mixed): see FailureParts.
 */
export function headersSayFailureReport(headers: Headers | null): boolean {
  const contentType = headers?.get('content-type')
  if (typeof contentType !== 'object' || contentType === null || !('value' in contentType)) return false
  if (typeof contentType.value !== 'string' || contentType.value.toLowerCase() !== 'multipart/report')
    return false
  const reportType = (contentType as { params?: Record<string, string> }).params?.['report-type']
  return reportType === undefined || reportType.trim().toLowerCase() === 'feedback-report'
}

/** The header section of an embedded message: everything before the first empty line. */
function headerSection(content: Uint8Array): Uint8Array {
  const limit = Math.min(content.byteLength, MAX_HEADER_BYTES)
  for (let i = 0; i < limit; i++) {
    if (content[i] !== 0x0a) continue
    if (i === 0 || content[i + 1] === 0x0a || (content[i + 1] === 0x0d && content[i + 2] === 0x0a)) {
      return content.subarray(0, i)
    }
  }
  return content.subarray(0, limit)
}

type Piece = 'feedback' | 'message' | 'headers'

/** The ARF pieces of one message, kept as their parts stream past (the first of each kind). */
export class FailureParts {
  private readonly kept: Partial<
    Record<Piece, { filename: string | null; type: string; bytes: Uint8Array }>
  > = {}

  /** Which piece a part of this type would be, if that piece is still wanted. */
  wants(contentType: string): Piece | null {
    const type = contentType.toLowerCase()
    const piece: Piece | null =
      type === FEEDBACK_TYPE
        ? 'feedback'
        : ORIGINAL_MESSAGE_TYPES.includes(type)
          ? 'message'
          : ORIGINAL_HEADER_TYPES.includes(type)
            ? 'headers'
            : null
    return piece === null || this.kept[piece] !== undefined ? null : piece
  }

  static limit(piece: Piece): number {
    return piece === 'feedback' ? MAX_FEEDBACK_BYTES : MAX_HEADER_BYTES
  }

  keep(piece: Piece, part: { filename: string | null; type: string }, bytes: Uint8Array): void {
    this.kept[piece] ??= { ...part, bytes }
  }

  get hasFeedback(): boolean {
    return this.kept.feedback !== undefined
  }

  /** The feedback-report part: its file name, declared type and bytes (for the payload's stream). */
  feedback(): { filename: string | null; type: string; bytes: Uint8Array } | null {
    return this.kept.feedback ?? null
  }

  parts(text: string | null, subject: string | null): FailureReportParts {
    const { feedback, message, headers } = this.kept
    let originalHeaders: string | null = null
    if (message !== undefined) originalHeaders = decoder.decode(headerSection(message.bytes))
    else if (headers !== undefined)
      originalHeaders = decoder.decode(headers.bytes.subarray(0, MAX_HEADER_BYTES))
    return {
      feedbackReport:
        feedback === undefined ? null : decoder.decode(feedback.bytes.subarray(0, MAX_FEEDBACK_BYTES)),
      originalHeaders,
      humanReadable: text ? text.slice(0, MAX_TEXT_CHARS) : null,
      subject,
    }
  }
}
