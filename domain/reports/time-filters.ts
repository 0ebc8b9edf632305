import { invalid, ok, type Result } from '../shared/result.ts'
import { dateTimeMs, END_INSTANT_MS, FIRST_INSTANT_MS } from './period.ts'

// The `since`/`until` filters of the lists that take them (alerts, failure reports, the dashboard's
// failure list; docs/api.md): ISO 8601 as RFC 3339 §5.6 profiles it, but seconds may be left out; a
// time always has its offset; `T` may be lower case or a space (§5.6 NOTE). Never a date rolled
// over, nor a timestamp read in the server's time zone.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+-])(\d{2}):(\d{2})))?$/
const DAY_MS = 86_400_000
/** The last millisecond a filter may name (period.ts END_INSTANT_MS). */
const LAST_MS = END_INSTANT_MS - 1

/** An instant to the nanosecond: a fraction may have 9 digits, a Date holds milliseconds. */
interface Instant {
  ms: number
  /** Nanoseconds past `ms`, 0 to 999,999. */
  ns: number
}

const before = (a: Instant, b: Instant) => a.ms < b.ms || (a.ms === b.ms && a.ns < b.ns)

/**
 * The instant a date (midnight UTC) or a timestamp names, or null when a field is out of range
 * (RFC 3339 §5.7: hour 00-23, minute 00-59, second 00-59, offset at most 23:59). No leap second:
 * the times filtered are POSIX time, which has none.
 */
function instantOf(match: RegExpExecArray): Instant | null {
  const field = (i: number) => Number(match[i] ?? 0)
  const second = dateTimeMs(
    {
      year: field(1),
      month: field(2),
      day: field(3),
      hour: field(4),
      minute: field(5),
      second: field(6),
      offsetSign: (match[8] as '+' | '-' | undefined) ?? null,
      offsetHours: field(9),
      offsetMinutes: field(10),
    },
    59,
  )
  if (second === null) return null
  const fraction = (match[7] ?? '').padEnd(9, '0')
  return { ms: second + Number(fraction.slice(0, 3)), ns: Number(fraction.slice(3)) }
}

/**
 * A date or an offset-bearing timestamp, as the first instant a filter covers (`since`) or the
 * last (`until`): a date for `until` covers its whole day, a timestamp itself. A timestamp without
 * an offset is refused rather than read in some time zone. Every instant from 0001-01-01T00:00:00Z
 * to 9999-12-31T23:59:59.999Z is exact; anything outside is refused, never clamped.
 */
function instant(field: string, text: string, end: boolean): Result<Instant> {
  const match = DATE_TIME.exec(text)
  if (match === null) {
    return invalid(
      field,
      `The ${field} field must be an ISO 8601 date or a timestamp with a time zone offset.`,
    )
  }
  const at = instantOf(match)
  if (at === null) {
    const rules =
      'month 01-12, a day of that month, hour 00-23, minute and second 00-59, offset at most ±23:59'
    return invalid(field, `The ${field} field must be a real date and time (${rules}).`)
  }
  if (at.ms < FIRST_INSTANT_MS || at.ms > LAST_MS || (at.ms === LAST_MS && at.ns > 0)) {
    return invalid(
      field,
      `The ${field} field must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, its offset applied.`,
    )
  }
  const wholeDay = end && match[4] === undefined
  return ok(wholeDay ? { ms: at.ms + DAY_MS - 1, ns: 999_999 } : at)
}

/**
 * `since` as the store's bound (at or after). A Date holds whole milliseconds, so an instant between
 * two rounds up to the next.
 */
const sinceBound = (since: Instant) => new Date(since.ns > 0 ? since.ms + 1 : since.ms)

/**
 * `until` as the store's bound, the first millisecond past it (before); none when that would be
 * 10000-01-01: PostgreSQL refuses it as a parameter (toISOString writes `+010000-…`), and no stored
 * time is later than 9999-12-31T23:59:59.999Z, written from a JS Date the same way.
 */
const untilBound = (until: Instant) => (until.ms < LAST_MS ? new Date(until.ms + 1) : undefined)

/**
 * A list's time bounds from `since` and `until`, both checked: `since` as the first instant to
 * include (at or after), `until` as the first millisecond past the last (before).
 */
export function timeFilters(query: { since?: string | undefined; until?: string | undefined }): Result<{
  since: Date | undefined
  until: Date | undefined
}> {
  const since = query.since === undefined ? ok(undefined) : instant('since', query.since, false)
  if (!since.ok) return since
  const until = query.until === undefined ? ok(undefined) : instant('until', query.until, true)
  if (!until.ok) return until
  if (since.value !== undefined && until.value !== undefined && before(until.value, since.value))
    return invalid('until', 'The until field must not be before since.')
  return ok({
    since: since.value === undefined ? undefined : sinceBound(since.value),
    until: until.value === undefined ? undefined : untilBound(until.value),
  })
}
