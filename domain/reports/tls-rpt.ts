// SMTP TLS Reporting (RFC 8460 §4): the JSON report a sending MTA delivers by mail (§5.3) or
// HTTPS POST (§5.4). The transport and the gzip layer are the caller's; this takes the JSON text.
// Validation is strict on the structure and the fields RFC 8460 §4 requires, and liberal where
// the RFC leaves room: unknown result types are kept, optional fields may be missing, and mx-host
// may arrive as a single string instead of an array (some reporters send it that way).

import {
  array,
  canonicalIp,
  count,
  dateTime,
  Invalid,
  invalid,
  nonEmpty,
  object,
  optionalArray,
  optionalString,
  required,
  string,
  stringList,
} from './tls-rpt-json.ts'

export type TlsRptPolicyType = 'sts' | 'tlsa' | 'no-policy-found'

/** RFC 8460 §4 result types; any other value a reporter sends is kept as written. */
export const KNOWN_RESULT_TYPES = [
  'starttls-not-supported',
  'certificate-host-mismatch',
  'certificate-expired',
  'certificate-not-trusted',
  'validation-failure',
  'tlsa-invalid',
  'dnssec-invalid',
  'dane-required',
  'sts-policy-fetch-error',
  'sts-policy-invalid',
  'sts-webpki-invalid',
] as const

export interface TlsRptFailureDetail {
  resultType: string
  sendingMtaIp: string | null
  receivingMxHostname: string | null
  receivingMxHelo: string | null
  receivingIp: string | null
  failedSessionCount: number
  additionalInformation: string | null
  failureReasonCode: string | null
}

export interface TlsRptPolicyResult {
  policyType: TlsRptPolicyType
  /** The applied policy, one string per line (STS) or per record (TLSA); empty when none applied. */
  policyStrings: string[]
  /** Lower-cased, without a trailing dot. */
  policyDomain: string
  mxHosts: string[]
  totalSuccessfulSessionCount: number
  totalFailureSessionCount: number
  failureDetails: TlsRptFailureDetail[]
}

export interface TlsRptReport {
  organizationName: string
  /** RFC 3339 date-times as written, and as Unix seconds. */
  startDatetime: string
  endDatetime: string
  begin: number
  end: number
  contactInfo: string | null
  reportId: string
  policies: TlsRptPolicyResult[]
}

export type TlsRptParseError =
  | { code: 'empty'; message: string }
  | { code: 'invalid_json'; message: string }
  | { code: 'missing_field'; path: string; message: string }
  | { code: 'invalid_value'; path: string; message: string }
  | { code: 'limit_exceeded'; message: string }

export type TlsRptParse = { ok: true; report: TlsRptReport } | { ok: false; error: TlsRptParseError }

export interface TlsRptLimits {
  /** Characters of JSON accepted before parsing. */
  maxLength: number
  maxPolicies: number
  /** Failure details in one policy. */
  maxFailureDetails: number
  /** Characters in one string field. */
  maxStringLength: number
}

export const DEFAULT_TLS_RPT_LIMITS: TlsRptLimits = {
  maxLength: 16 * 1024 * 1024,
  maxPolicies: 1000,
  maxFailureDetails: 10_000,
  maxStringLength: 8 * 1024,
}

export function parseTlsRptReport(text: string, limits: TlsRptLimits = DEFAULT_TLS_RPT_LIMITS): TlsRptParse {
  if (text.length > limits.maxLength) {
    return fail({
      code: 'limit_exceeded',
      message: `the report is longer than ${limits.maxLength} characters`,
    })
  }
  const source = text.replace(/^\uFEFF/, '')
  if (source.trim() === '') return fail({ code: 'empty', message: 'the report is empty' })
  let json: unknown
  try {
    json = JSON.parse(source)
  } catch (error) {
    return fail({ code: 'invalid_json', message: `the report is not JSON: ${(error as Error).message}` })
  }
  try {
    return { ok: true, report: readReport(json, limits) }
  } catch (error) {
    if (error instanceof Invalid) return fail(error.error)
    throw error
  }
}

function fail(error: TlsRptParseError): TlsRptParse {
  return { ok: false, error }
}

function readReport(json: unknown, limits: TlsRptLimits): TlsRptReport {
  const root = object(json, '$')
  const range = object(required(root, 'date-range', '$'), 'date-range')
  const startDatetime = string(
    required(range, 'start-datetime', 'date-range'),
    'date-range.start-datetime',
    limits,
  )
  const endDatetime = string(required(range, 'end-datetime', 'date-range'), 'date-range.end-datetime', limits)
  const begin = dateTime(startDatetime, 'date-range.start-datetime')
  const end = dateTime(endDatetime, 'date-range.end-datetime')
  if (end < begin) invalid('date-range.end-datetime', 'the end of the date range is before its start')
  const policies = array(required(root, 'policies', '$'), 'policies')
  if (policies.length > limits.maxPolicies) {
    throw new Invalid({ code: 'limit_exceeded', message: `more than ${limits.maxPolicies} policies` })
  }
  return {
    organizationName: nonEmpty(required(root, 'organization-name', '$'), 'organization-name', limits),
    startDatetime,
    endDatetime,
    begin,
    end,
    // RFC 8460 §4 lists contact-info with the other metadata, but a report without it is still
    // usable, and some reporters leave it out.
    contactInfo: optionalString(root, 'contact-info', '$', limits),
    reportId: nonEmpty(required(root, 'report-id', '$'), 'report-id', limits),
    policies: policies.map((policy, i) => readPolicy(policy, `policies[${i}]`, limits)),
  }
}

function readPolicy(value: unknown, path: string, limits: TlsRptLimits): TlsRptPolicyResult {
  const entry = object(value, path)
  const policy = object(required(entry, 'policy', path), `${path}.policy`)
  const summary = object(required(entry, 'summary', path), `${path}.summary`)
  const policyPath = `${path}.policy`
  const type = nonEmpty(required(policy, 'policy-type', policyPath), `${policyPath}.policy-type`, limits)
  const policyType = type.toLowerCase()
  if (policyType !== 'sts' && policyType !== 'tlsa' && policyType !== 'no-policy-found') {
    invalid(
      `${policyPath}.policy-type`,
      `policy-type "${type}" is not sts, tlsa or no-policy-found (RFC 8460 §4)`,
    )
  }
  const details = optionalArray(entry, 'failure-details', path)
  if (details.length > limits.maxFailureDetails) {
    throw new Invalid({
      code: 'limit_exceeded',
      message: `${path} has more than ${limits.maxFailureDetails} failure details`,
    })
  }
  return {
    policyType,
    policyStrings: stringList(policy, 'policy-string', policyPath, limits),
    policyDomain: nonEmpty(
      required(policy, 'policy-domain', policyPath),
      `${policyPath}.policy-domain`,
      limits,
    )
      .toLowerCase()
      .replace(/\.$/, ''),
    mxHosts: stringList(policy, 'mx-host', policyPath, limits),
    totalSuccessfulSessionCount: count(summary, 'total-successful-session-count', `${path}.summary`),
    totalFailureSessionCount: count(summary, 'total-failure-session-count', `${path}.summary`),
    failureDetails: details.map((detail, i) =>
      readFailureDetail(detail, `${path}.failure-details[${i}]`, limits),
    ),
  }
}

function readFailureDetail(value: unknown, path: string, limits: TlsRptLimits): TlsRptFailureDetail {
  const detail = object(value, path)
  const text = (key: string) => optionalString(detail, key, path, limits)
  return {
    resultType: nonEmpty(required(detail, 'result-type', path), `${path}.result-type`, limits).toLowerCase(),
    sendingMtaIp: canonicalIp(text('sending-mta-ip')),
    receivingMxHostname: text('receiving-mx-hostname'),
    receivingMxHelo: text('receiving-mx-helo'),
    receivingIp: canonicalIp(text('receiving-ip')),
    failedSessionCount: count(detail, 'failed-session-count', path),
    additionalInformation: text('additional-information'),
    failureReasonCode: text('failure-reason-code'),
  }
}
