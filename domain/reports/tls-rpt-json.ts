// The JSON field readers of the TLS-RPT parser (domain/reports/tls-rpt.ts): each reads one value
// of RFC 8460 §4's shape and throws Invalid, naming its path, for anything else.

import { canonicalIpText } from '../spf/ip.ts'
import { dateTimeMs, END_INSTANT_MS, FIRST_INSTANT_MS } from './period.ts'
import type { TlsRptLimits, TlsRptParseError } from './tls-rpt.ts'

/** Thrown inside the parser only, to unwind from a nested field; never escapes parseTlsRptReport. */
export class Invalid {
  constructor(readonly error: TlsRptParseError) {}
}

export type Json = Record<string, unknown>

/**
 * An address in one spelling (RFC 5952 for IPv6, an IPv4-mapped one as IPv4), as failure reports
 * store theirs, so the same sender is the same text; a value that is no address is kept as written.
 */
export function canonicalIp(value: string | null): string | null {
  return value === null ? null : (canonicalIpText(value.trim()) ?? value)
}

export function invalid(path: string, message: string): never {
  throw new Invalid({ code: 'invalid_value', path, message: `${path}: ${message}` })
}

export function required(parent: Json, key: string, parentPath: string): unknown {
  const path = parentPath === '$' ? key : `${parentPath}.${key}`
  if (!Object.hasOwn(parent, key) || parent[key] === null) {
    throw new Invalid({ code: 'missing_field', path, message: `${path} is missing (RFC 8460 §4)` })
  }
  return parent[key]
}

export function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid(path, 'expected an object')
  return value as Json
}

export function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) invalid(path, 'expected an array')
  return value
}

export function string(value: unknown, path: string, limits: TlsRptLimits): string {
  if (typeof value !== 'string') invalid(path, 'expected a string')
  if (value.length > limits.maxStringLength) {
    throw new Invalid({
      code: 'limit_exceeded',
      message: `${path} is longer than ${limits.maxStringLength} characters`,
    })
  }
  return value.trim()
}

export function nonEmpty(value: unknown, path: string, limits: TlsRptLimits): string {
  const text = string(value, path, limits)
  if (text === '') invalid(path, 'must not be empty')
  return text
}

export function optionalString(
  parent: Json,
  key: string,
  parentPath: string,
  limits: TlsRptLimits,
): string | null {
  if (!Object.hasOwn(parent, key) || parent[key] === null) return null
  const path = parentPath === '$' ? key : `${parentPath}.${key}`
  const text = string(parent[key], path, limits)
  return text === '' ? null : text
}

export function optionalArray(parent: Json, key: string, parentPath: string): unknown[] {
  if (!Object.hasOwn(parent, key) || parent[key] === null) return []
  return array(parent[key], `${parentPath}.${key}`)
}

/** An array of strings; a lone string is taken as a one-element array. */
export function stringList(parent: Json, key: string, parentPath: string, limits: TlsRptLimits): string[] {
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
export function count(parent: Json, key: string, parentPath: string): number {
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
export function dateTime(value: string, path: string): number {
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
