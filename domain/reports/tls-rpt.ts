// SMTP TLS Reporting (RFC 8460 §4): the JSON report a sending MTA delivers by mail (§5.3) or
// HTTPS POST (§5.4). The transport and the gzip layer are the caller's; this takes the JSON text.
// Validation is strict on the structure and the fields RFC 8460 §4 requires, and liberal where
// the RFC leaves room: unknown result types are kept, optional fields may be missing, and mx-host
// may arrive as a single string instead of an array (some reporters send it that way).

import { formatIp, parseIp, unmapIpv4 } from '../spf/ip.ts'
import { dateTimeMs, END_INSTANT_MS, FIRST_INSTANT_MS } from './period.ts'

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

/** Thrown inside the parser only, to unwind from a nested field; never escapes parseTlsRptReport. */
class Invalid {
  constructor(readonly error: TlsRptParseError) {}
}

type Json = Record<string, unknown>

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

/**
 * An address in one spelling (RFC 5952 for IPv6, an IPv4-mapped one as IPv4), as failure reports
 * store theirs, so the same sender is the same text; a value that is no address is kept as written.
 */
function canonicalIp(value: string | null): string | null {
  const ip = value === null ? null : parseIp(value.trim())
  return ip === null ? value : formatIp(unmapIpv4(ip))
}

function invalid(path: string, message: string): never {
  throw new Invalid({ code: 'invalid_value', path, message: `${path}: ${message}` })
}

function required(parent: Json, key: string, parentPath: string): unknown {
  const path = parentPath === '$' ? key : `${parentPath}.${key}`
  if (!Object.hasOwn(parent, key) || parent[key] === null) {
    throw new Invalid({ code: 'missing_field', path, message: `${path} is missing (RFC 8460 §4)` })
  }
  return parent[key]
}

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid(path, 'expected an object')
  return value as Json
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) invalid(path, 'expected an array')
  return value
}

function string(value: unknown, path: string, limits: TlsRptLimits): string {
  if (typeof value !== 'string') invalid(path, 'expected a string')
  if (value.length > limits.maxStringLength) {
    throw new Invalid({
      code: 'limit_exceeded',
      message: `${path} is longer than ${limits.maxStringLength} characters`,
    })
  }
  return value.trim()
}

function nonEmpty(value: unknown, path: string, limits: TlsRptLimits): string {
  const text = string(value, path, limits)
  if (text === '') invalid(path, 'must not be empty')
  return text
}

function optionalString(parent: Json, key: string, parentPath: string, limits: TlsRptLimits): string | null {
  if (!Object.hasOwn(parent, key) || parent[key] === null) return null
  const path = parentPath === '$' ? key : `${parentPath}.${key}`
  const text = string(parent[key], path, limits)
  return text === '' ? null : text
}

function optionalArray(parent: Json, key: string, parentPath: string): unknown[] {
  if (!Object.hasOwn(parent, key) || parent[key] === null) return []
  return array(parent[key], `${parentPath}.${key}`)
}

/** An array of strings; a lone string is taken as a one-element array. */
function stringList(parent: Json, key: string, parentPath: string, limits: TlsRptLimits): string[] {
  if (!Object.hasOwn(parent, key) || parent[key] === null) return []
  const path = `${parentPath}.${key}`
  const value = parent[key]
  const items = typeof value === 'string' ? [value] : array(value, path)
  if (items.length > limits.maxFailureDetails) {
    throw new Invalid({
      code: 'limit_exceeded',
      message: `${path} has more than ${limits.maxFailureDetails} entries`,
    })
  }
  return items.map((item, i) => string(item, `${path}[${i}]`, limits)).filter((item) => item !== '')
}

/**
 * The most one session count may say: 2^31 - 1, the bound of an aggregate report's row count
 * (docs/decisions-aggregate-parser.md). A report's sums then stay below 2^50 (at the default
 * limits: 1000 policies, and as many failure details as 16 MB of JSON holds, some 310,000), well
 * inside 2^53, the largest integer a JSON number holds exactly. At 2^53 - 1 a count, one report's
 * totals were not whole numbers any more (18014398509481982000).
 */
export const MAX_SESSION_COUNT = 2_147_483_647

/** RFC 8460 §4.4 session counts: JSON integers from 0 to MAX_SESSION_COUNT (`5e2` is 500). */
function count(parent: Json, key: string, parentPath: string): number {
  const path = `${parentPath}.${key}`
  const value = required(parent, key, parentPath)
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SESSION_COUNT) {
    invalid(path, `expected an integer from 0 to ${MAX_SESSION_COUNT}`)
  }
  return value
}

// RFC 8460 §4.4: start-datetime and end-datetime are RFC 3339 §5.6 date-times; "T" and "Z" may be
// lower case, and §5.6's NOTE allows a space for "T". Deviation: §5.6 requires the time-offset, but
// Microsoft sends "2023-01-10T00:00:00" (tests/fixtures/tls-rpt/mox/microsoft.eml). Such a time is
// read as UTC, as mox does (its tlsrpt/report.go, xtime): that report's file name gives the same
// range as UTC Unix times.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))?$/

/**
 * Unix seconds of an RFC 3339 date-time, fractions dropped. Each field is held to RFC 3339 §5.7
 * (a leap second allowed), and the instant, its offset applied, to 0001-01-01T00:00:00Z ..
 * 9999-12-31T23:59:59Z (period.ts dateTimeMs): nothing is rolled over or clamped into another date.
 * No offset counts as UTC, like "Z".
 */
function dateTime(value: string, path: string): number {
  const match = DATE_TIME.exec(value)
  if (!match) invalid(path, `"${value}" is not an RFC 3339 date-time`)
  const field = (i: number) => Number(match[i] ?? 0)
  const ms = dateTimeMs(
    {
      year: field(1),
      month: field(2),
      day: field(3),
      hour: field(4),
      minute: field(5),
      second: field(6),
      offsetSign: (match[7] as '+' | '-' | undefined) ?? null,
      offsetHours: field(8),
      offsetMinutes: field(9),
    },
    60,
  )
  if (ms === null) invalid(path, `"${value}" is not a real date-time (RFC 3339 §5.7)`)
  if (ms < FIRST_INSTANT_MS || ms >= END_INSTANT_MS) {
    invalid(path, `"${value}" is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z`)
  }
  return ms / 1000
}
