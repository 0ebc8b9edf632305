import type { Attachment, ParsedMail } from 'mailparser'
import type { FailureReportParts } from '../../domain/reports/forensic.ts'

// Glue between mailparser and the pure failure-report parser: which parts of a parsed message
// are the ARF pieces (RFC 5965 §2), as text. Only the header section of the reported message is
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

export function isFeedbackPart(attachment: Attachment): boolean {
  return attachment.contentType.toLowerCase() === FEEDBACK_TYPE
}

/**
 * Whether the message is a failure report: it has a feedback-report part (Netease sends one inside
 * multipart/mixed), or it is a multipart/report whose report-type is feedback-report or missing
 * (Exim sends no report-type and no ARF part). Other report types (delivery-status, tlsrpt) are not.
 */
export function isFailureReport(parsed: ParsedMail): boolean {
  if (parsed.attachments.some(isFeedbackPart)) return true
  const contentType = parsed.headers.get('content-type')
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

export function failureReportParts(parsed: ParsedMail): FailureReportParts {
  const feedback = parsed.attachments.find(isFeedbackPart)
  const type = (attachment: Attachment) => attachment.contentType.toLowerCase()
  const message = parsed.attachments.find((attachment) => ORIGINAL_MESSAGE_TYPES.includes(type(attachment)))
  const headers = parsed.attachments.find((attachment) => ORIGINAL_HEADER_TYPES.includes(type(attachment)))
  let originalHeaders: string | null = null
  if (message !== undefined) originalHeaders = decoder.decode(headerSection(message.content))
  else if (headers !== undefined)
    originalHeaders = decoder.decode(headers.content.subarray(0, MAX_HEADER_BYTES))
  return {
    feedbackReport:
      feedback === undefined ? null : decoder.decode(feedback.content.subarray(0, MAX_FEEDBACK_BYTES)),
    originalHeaders,
    humanReadable: parsed.text ? parsed.text.slice(0, MAX_TEXT_CHARS) : null,
    subject: parsed.subject ?? null,
  }
}
