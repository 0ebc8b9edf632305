import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { enumOf, ResponseInt } from '../../plugins/api-models.ts'

// The parsed failure report of GET /dmarc-reports/forensic/reports(/{id}): stored as the parser
// wrote it (domain/reports/forensic.ts, camelCase JSON), presented field by field in snake_case.

const text = () => t.Union([t.String(), t.Null()])
const list = (description?: string) => t.Array(t.String(), description === undefined ? {} : { description })

export const FailureReportModel = t.Object(
  {
    format: enumOf(
      ['arf', 'plain-text'],
      '`arf`: a message/feedback-report part; `plain-text`: read from prose',
    ),
    feedback_type: t.String({
      description: 'RFC 5965 §3.1 Feedback-Type, lower-cased',
      examples: ['auth-failure'],
    }),
    version: text(),
    user_agent: text(),
    arrival_date: t.Union([t.String(), t.Null()], { description: 'Arrival-Date as written' }),
    arrival_time: t.Union([ResponseInt(), t.Null()], {
      description: 'Arrival-Date in Unix seconds, when it parses',
    }),
    source_ip: text(),
    reporting_mta: text(),
    incidents: ResponseInt({ description: 'RFC 5965 §3.2 Incidents; 1 when absent' }),
    original_mail_from: t.Union([t.String(), t.Null()], { description: 'Null for the null sender <>' }),
    original_rcpt_to: list(),
    original_envelope_id: text(),
    reported_domains: list('Lower-cased, without a trailing dot'),
    reported_uris: list(),
    authentication_results: list(),
    auth_failure: t.Union([t.String(), t.Null()], { description: 'RFC 6591 §3.1 Auth-Failure, lower-cased' }),
    identity_alignment: list('RFC 7489 §7.3.1 Identity-Alignment: none, spf, dkim'),
    delivery_result: t.Union([t.String(), t.Null()], {
      description: 'RFC 6591 §3.2 Delivery-Result, lower-cased',
    }),
    dkim_domain: text(),
    dkim_identity: text(),
    dkim_selector: text(),
    spf_dns: text(),
    original: t.Union(
      [
        t.Object({
          from: text(),
          to: text(),
          subject: text(),
          date: text(),
          message_id: text(),
        }),
        t.Null(),
      ],
      { description: 'Headers of the reported message (decoded); never its body' },
    ),
    local_parts_redacted: t.Boolean(),
  },
  { description: 'The parsed failure report: ARF fields and original headers, never the body' },
)

type Row = Record<string, unknown>

const objectOf = (value: unknown): Row => {
  const parsed = typeof value === 'string' ? safeParse(value) : value
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Row) : {}
}

function safeParse(value: string): unknown {
  try {
    return JSON.parse(value)
  } catch {
    return null
  }
}

const orNull = (value: unknown) => (value === null || value === undefined ? null : String(value))
const strings = (value: unknown) => (Array.isArray(value) ? value.map(String) : [])
const int = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : null)

/** The stored report (domain/reports/forensic.ts ForensicReport) in the API's snake_case. */
export function presentFailureReport(stored: unknown): Static<typeof FailureReportModel> {
  const r = objectOf(stored)
  const original = r.original === null || r.original === undefined ? null : objectOf(r.original)
  return {
    format: r.format === 'plain-text' ? 'plain-text' : 'arf',
    feedback_type: String(r.feedbackType ?? ''),
    version: orNull(r.version),
    user_agent: orNull(r.userAgent),
    arrival_date: orNull(r.arrivalDate),
    arrival_time: int(r.arrivalTime),
    source_ip: orNull(r.sourceIp),
    reporting_mta: orNull(r.reportingMta),
    incidents: int(r.incidents) ?? 1,
    original_mail_from: orNull(r.originalMailFrom),
    original_rcpt_to: strings(r.originalRcptTo),
    original_envelope_id: orNull(r.originalEnvelopeId),
    reported_domains: strings(r.reportedDomains),
    reported_uris: strings(r.reportedUris),
    authentication_results: strings(r.authenticationResults),
    auth_failure: orNull(r.authFailure),
    identity_alignment: strings(r.identityAlignment),
    delivery_result: orNull(r.deliveryResult),
    dkim_domain: orNull(r.dkimDomain),
    dkim_identity: orNull(r.dkimIdentity),
    dkim_selector: orNull(r.dkimSelector),
    spf_dns: orNull(r.spfDns),
    original:
      original === null
        ? null
        : {
            from: orNull(original.from),
            to: orNull(original.to),
            subject: orNull(original.subject),
            date: orNull(original.date),
            message_id: orNull(original.messageId),
          },
    local_parts_redacted: r.localPartsRedacted === true,
  }
}
