import { canonicalIpText } from '../spf/ip.ts'
import { findPlainTextDetails } from './forensic-plain-text.ts'
import {
  allFields,
  bareAddress,
  decodeEncodedWords,
  firstField,
  type HeaderField,
  parseHeaderFields,
  stripComments,
} from './header-fields.ts'
import { parseMailDate } from './mail-date.ts'

// Failure reports (RUF): the Abuse Reporting Format (RFC 5965), its authentication-failure
// extension (RFC 6591) and DMARC's use of it (RFC 7489 §7.3, RFC 9991). The MIME work is done by
// the caller, which hands over the parts as text; nothing of the reported message's body is kept.

/** The pieces of a `multipart/report` (RFC 5965 §2), already decoded from their transfer encoding. */
export interface FailureReportParts {
  /** Body of the `message/feedback-report` part (RFC 5965 §3), or null when the sender sent none. */
  feedbackReport: string | null
  /** Header section of the reported message: the `message/rfc822` part up to its first empty line, or `text/rfc822-headers`. */
  originalHeaders: string | null
  /** The human-readable part(s) (RFC 5965 §2 (b)): the only source when an MTA sends no ARF part. */
  humanReadable: string | null
  /** Subject of the report message itself; some MTAs put the source IP and domain there. */
  subject: string | null
}

export interface OriginalHeaders {
  /** Decoded (RFC 2047) header values as written, display names included. */
  from: string | null
  to: string | null
  subject: string | null
  date: string | null
  messageId: string | null
}

export interface ForensicReport {
  /** `arf`: read from a `message/feedback-report` part; `plain-text`: pieced together from prose. */
  format: 'arf' | 'plain-text'
  /** RFC 5965 §3.1 Feedback-Type, lower-cased: `auth-failure` for DMARC, `abuse`, `fraud`, ... kept when unknown. */
  feedbackType: string
  version: string | null
  userAgent: string | null
  /** Arrival-Date as written, and as Unix seconds when it parses (RFC 5322 §3.3). */
  arrivalDate: string | null
  arrivalTime: number | null
  /** Canonical form (RFC 5952 for IPv6); null when absent or not an IP address. */
  sourceIp: string | null
  reportingMta: string | null
  /** RFC 5965 §3.2 Incidents; 1 when absent. */
  incidents: number
  /** Envelope addresses without angle brackets; the null sender `<>` is null. */
  originalMailFrom: string | null
  originalRcptTo: string[]
  originalEnvelopeId: string | null
  /** Lower-cased, without a trailing dot. */
  reportedDomains: string[]
  reportedUris: string[]
  authenticationResults: string[]
  /** RFC 6591 §3.1 Auth-Failure, lower-cased (adsp, bodyhash, revoked, signature, spf, dmarc, ...), kept when unknown. */
  authFailure: string | null
  /** RFC 7489 §7.3.1 Identity-Alignment: `none`, `spf`, `dkim`, lower-cased. */
  identityAlignment: string[]
  /** RFC 6591 §3.2 Delivery-Result (delivered, spam, policy, reject, other), lower-cased, kept when unknown. */
  deliveryResult: string | null
  dkimDomain: string | null
  dkimIdentity: string | null
  dkimSelector: string | null
  spfDns: string | null
  original: OriginalHeaders | null
  /** Whether the local parts of addresses were replaced (see redactLocalParts). */
  localPartsRedacted: boolean
}

export type ForensicParseError =
  | { code: 'missing_field'; message: string }
  | { code: 'not_failure_report'; message: string }

export type ForensicParse = { ok: true; report: ForensicReport } | { ok: false; error: ForensicParseError }

// Parts are bounded by the caller; this keeps the pure function safe on its own.
const MAX_PART_CHARS = 1024 * 1024

const clip = (text: string | null) => (text === null ? null : text.slice(0, MAX_PART_CHARS))

export function parseFailureReport(parts: FailureReportParts): ForensicParse {
  const humanReadable = clip(parts.humanReadable)
  const headerText = clip(parts.originalHeaders)
  const fromPart = headerText === null ? [] : parseHeaderFields(headerText, { untilBlankLine: true })
  const headerFields = fromPart.length > 0 ? fromPart : embeddedHeaderFields(humanReadable ?? '')
  const original = originalHeaders(headerFields)
  const feedback = clip(parts.feedbackReport)
  if (feedback !== null && feedback.trim() !== '') return fromArf(parseHeaderFields(feedback), original)
  return fromPlainText(humanReadable ?? '', parts.subject ?? '', original)
}

function fromArf(fields: HeaderField[], original: OriginalHeaders | null): ForensicParse {
  const feedbackType = firstField(fields, 'feedback-type')
  // RFC 5965 §3.1: Feedback-Type, User-Agent and Version are required; without the type the part
  // is not a report at all, the other two are only informative and tolerated when missing.
  if (feedbackType === null || feedbackType === '') {
    return {
      ok: false,
      error: { code: 'missing_field', message: 'the feedback report has no Feedback-Type (RFC 5965 §3.1)' },
    }
  }
  const text = (name: string) => emptyToNull(firstField(fields, name))
  // "Received-Date" is the name the ARF drafts used; some generators still write it.
  const arrivalDate = text('arrival-date') ?? text('received-date')
  const incidents = Number(text('incidents') ?? '1')
  return {
    ok: true,
    report: {
      format: 'arf',
      feedbackType: feedbackType.toLowerCase(),
      version: text('version'),
      userAgent: text('user-agent'),
      arrivalDate,
      arrivalTime: arrivalDate === null ? null : parseMailDate(arrivalDate),
      sourceIp: normalizeIp(text('source-ip')),
      // RFC 5965 §3.2 (from RFC 3464): Reporting-MTA: mta-name-type; mta-name
      reportingMta: reportingMta(text('reporting-mta')),
      incidents: Number.isSafeInteger(incidents) && incidents > 0 ? incidents : 1,
      originalMailFrom: addressField(text('original-mail-from')),
      originalRcptTo: allFields(fields, 'original-rcpt-to')
        .map(addressField)
        .filter((address) => address !== null),
      originalEnvelopeId: text('original-envelope-id'),
      reportedDomains: unique(
        allFields(fields, 'reported-domain')
          .map(normalizeDomain)
          .filter((d) => d !== ''),
      ),
      reportedUris: allFields(fields, 'reported-uri').filter((uri) => uri !== ''),
      authenticationResults: allFields(fields, 'authentication-results').filter((value) => value !== ''),
      authFailure: text('auth-failure')?.toLowerCase() ?? null,
      identityAlignment: listField(text('identity-alignment')),
      deliveryResult: text('delivery-result')?.toLowerCase() ?? null,
      dkimDomain: mapNull(text('dkim-domain'), normalizeDomain),
      dkimIdentity: text('dkim-identity'),
      dkimSelector: text('dkim-selector'),
      spfDns: text('spf-dns'),
      original,
      localPartsRedacted: false,
    },
  }
}

/**
 * Some MTAs (Exim's DMARC module among them) send `multipart/report` with only a text part. What
 * can be recognised there is kept; a text with none of source IP, domain or original headers is
 * not taken for a failure report.
 */
function fromPlainText(text: string, subject: string, original: OriginalHeaders | null): ForensicParse {
  const details = findPlainTextDetails(text, subject)
  const sourceIp = details.sourceIp.map(normalizeIp).find((ip) => ip !== null) ?? null
  const fromDomain = original?.from ? domainOf(original.from) : null
  const reportedDomain = details.reportedDomain ?? fromDomain
  if (sourceIp === null && reportedDomain === null && original === null) {
    return {
      ok: false,
      error: {
        code: 'not_failure_report',
        message: 'no feedback-report part, and the text names no source IP, domain or original headers',
      },
    }
  }
  return {
    ok: true,
    report: {
      format: 'plain-text',
      feedbackType: 'auth-failure',
      version: null,
      userAgent: null,
      arrivalDate: details.arrivalDate,
      arrivalTime: details.arrivalDate === null ? null : parseMailDate(details.arrivalDate),
      sourceIp,
      reportingMta: null,
      incidents: 1,
      originalMailFrom: null,
      originalRcptTo: [],
      originalEnvelopeId: null,
      reportedDomains: reportedDomain === null ? [] : [normalizeDomain(reportedDomain)],
      reportedUris: [],
      authenticationResults: [],
      authFailure: details.mentionsDmarc ? 'dmarc' : null,
      identityAlignment: details.identityAlignment,
      deliveryResult: null,
      dkimDomain: null,
      dkimIdentity: null,
      dkimSelector: null,
      spfDns: null,
      original,
      localPartsRedacted: false,
    },
  }
}

function originalHeaders(fields: HeaderField[]): OriginalHeaders | null {
  const decoded = (name: string) => mapNull(emptyToNull(firstField(fields, name)), decodeEncodedWords)
  const to = allFields(fields, 'to').filter((value) => value !== '')
  const headers: OriginalHeaders = {
    from: decoded('from'),
    to: to.length === 0 ? null : decodeEncodedWords(to.join(', ')),
    subject: decoded('subject'),
    date: emptyToNull(firstField(fields, 'date')),
    messageId: emptyToNull(firstField(fields, 'message-id')),
  }
  return Object.values(headers).every((value) => value === null) ? null : headers
}

/**
 * A copy of the original headers pasted into the text: the first paragraph made only of header
 * fields (and their continuation lines) that has a From or Received field.
 */
function embeddedHeaderFields(text: string): HeaderField[] {
  const paragraphs = text.split(/\r?\n[ \t]*\r?\n/)
  for (const paragraph of paragraphs) {
    const lines = paragraph.split(/\r?\n/).filter((line) => line.trim() !== '')
    if (lines.length < 2 || !/^[!-9;-~]+:/.test(lines[0]!)) continue
    if (!lines.every((line) => /^[!-9;-~]+:/.test(line) || /^[ \t]/.test(line))) continue
    const fields = parseHeaderFields(lines.join('\n'))
    if (fields.some((field) => field.name === 'from' || field.name === 'received')) return fields
  }
  return []
}

function normalizeIp(value: string | null): string | null {
  if (value === null) return null
  const cleaned = withoutTrailingPunctuation(
    stripComments(value)
      .replace(/^\[|\]$/g, '')
      .replace(/^ipv6:/i, ''),
  )
  return canonicalIpText(cleaned)
}

/**
 * `value` without the periods, commas, semicolons and colons that end a sentence. A loop, not
 * `/[.,;:]+$/`: that pattern is tried from every position of a long run of them and took 25 s on
 * a 250,000-character Source-IP.
 */
function withoutTrailingPunctuation(value: string): string {
  let end = value.length
  while (end > 0 && '.,;:'.includes(value[end - 1]!)) end--
  return value.slice(0, end)
}

function reportingMta(value: string | null): string | null {
  if (value === null) return null
  const name = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value
  return emptyToNull(stripComments(name))
}

function addressField(value: string | null): string | null {
  return value === null ? null : bareAddress(value)
}

function normalizeDomain(value: string): string {
  return stripComments(value).toLowerCase().replace(/\.$/, '')
}

function domainOf(header: string): string | null {
  const address = bareAddress(header)
  const at = address?.lastIndexOf('@') ?? -1
  return address && at > 0 ? address.slice(at + 1) : null
}

function listField(value: string | null): string[] {
  if (value === null) return []
  return unique(
    value
      .toLowerCase()
      .split(/[\s,]+/)
      .filter((item) => item !== ''),
  )
}

function emptyToNull(value: string | null): string | null {
  return value === null || value.trim() === '' ? null : value.trim()
}

function mapNull<T>(value: string | null, map: (value: string) => T): T | null {
  return value === null ? null : map(value)
}

function unique(values: string[]): string[] {
  return [...new Set(values)]
}
