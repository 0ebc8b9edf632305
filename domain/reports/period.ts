import { invalid, ok, type Result } from '../shared/result.ts'

// Report periods (docs/api.md "DMARC reports and periods"): `days` (default 30, 1..90: the last N
// days) or `from`/`to` ISO dates spanning at most 366 days (a year of history, a leap year
// included); anything else is a validation error, never a clamp. Summaries read the daily and
// weekly rollups, never records; what a year costs them is in docs/ingestion.md "Benchmarks".

export interface Period {
  /** Inclusive UTC dates, YYYY-MM-DD. */
  from: string
  to: string
}

export const DEFAULT_DAYS = 30
/** The most `days` may ask for. */
export const MAX_DAYS = 90
/** The most days a `from`/`to` range may span, both ends included. */
export const MAX_RANGE_DAYS = 366
const DATE = /^\d{4}-\d{2}-\d{2}$/
/** The first day a period may name: PostgreSQL's dates have no year 0 (1 BC is `0001-12-31 BC`). */
const FIRST_DAY = '0001-01-01'
const DAY_MS = 86_400_000

const day = (date: Date) => date.toISOString().slice(0, 10)
const msOf = (date: string) => Date.parse(`${date}T00:00:00Z`)

/**
 * Midnight UTC of a calendar day, the month rolling over into the year. Not Date.UTC, which reads
 * the years 0-99 as 1900-1999. Dates are compared as these numbers, never as ISO strings: past
 * 9999-12-31 toISOString gives `+010000-01-01`, which sorts before every four-digit year.
 */
function utcDay(year: number, month: number, date: number): number {
  const at = new Date(0)
  at.setUTCFullYear(year, month, date)
  return at.getTime()
}

/** Midnight UTC of a real calendar day (month 1-12) in ms, or null: utcDay rolls 2026-02-30 over to March 2. */
function calendarDay(year: number, month: number, day: number): number | null {
  const ms = utcDay(year, month - 1, day)
  const at = new Date(ms)
  return at.getUTCMonth() === month - 1 && at.getUTCDate() === day ? ms : null
}

/**
 * The instants a date-time from outside may name: PostgreSQL's timestamptz has no year 0 (1 BC is
 * `0001-12-31 BC`), and past 9999 toISOString writes `+010000-…`, which it refuses as a parameter.
 * From FIRST_INSTANT_MS, up to (not including) END_INSTANT_MS.
 */
export const FIRST_INSTANT_MS = utcDay(1, 0, 1)
export const END_INSTANT_MS = utcDay(10_000, 0, 1)

/** A date-time's fields as written (RFC 3339 §5.6); the offset's sign null for none or `Z`. */
export interface DateTimeFields {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  offsetSign: '+' | '-' | null
  offsetHours: number
  offsetMinutes: number
}

/**
 * Milliseconds of a date-time's whole second, its offset applied, or null when a field is out of
 * range (RFC 3339 §5.7: a day of that month in that year, hour 00-23, minute 00-59, second up to
 * `maxSecond`, offset hours 00-23 and minutes 00-59): nothing rolls over into another date. A leap
 * second (60, where allowed) reads as the second before it: Unix time has none.
 */
export function dateTimeMs(f: DateTimeFields, maxSecond: 59 | 60): number | null {
  const midnight = calendarDay(f.year, f.month, f.day)
  if (midnight === null || f.hour > 23 || f.minute > 59 || f.second > maxSecond) return null
  if (f.offsetHours > 23 || f.offsetMinutes > 59) return null
  const offset = (f.offsetSign === '-' ? -1 : 1) * (f.offsetHours * 60 + f.offsetMinutes)
  return midnight + ((f.hour * 60 + f.minute - offset) * 60 + Math.min(f.second, 59)) * 1000
}

export function periodOf(input: { days?: number; from?: string; to?: string }, now: Date): Result<Period> {
  if (input.from !== undefined || input.to !== undefined) {
    if (input.days !== undefined) return invalid('days', 'Give either days or from/to, not both.')
    const to = input.to ?? day(now)
    const from = input.from
    if (from === undefined) return invalid('from', 'The from field is required with to.')
    for (const [field, value] of [
      ['from', from],
      ['to', to],
    ] as const) {
      // A real calendar day: Date.parse rolls 2026-02-30 over to March 2 rather than failing.
      const parsed = msOf(value)
      if (!DATE.test(value) || Number.isNaN(parsed) || day(new Date(parsed)) !== value || value < FIRST_DAY) {
        return invalid(field, `The ${field} field must be an ISO date (YYYY-MM-DD).`)
      }
    }
    const span = (msOf(to) - msOf(from)) / DAY_MS + 1
    if (span < 1) return invalid('to', 'The to date must not be before the from date.')
    if (span > MAX_RANGE_DAYS) {
      return invalid('to', `The period from ${from} to ${to} spans ${span} days; at most ${MAX_RANGE_DAYS}.`)
    }
    return ok({ from, to })
  }
  const days = input.days ?? DEFAULT_DAYS
  if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
    return invalid('days', `The days field must be a whole number from 1 to ${MAX_DAYS}.`)
  }
  return ok({ from: day(new Date(now.getTime() - (days - 1) * 86_400_000)), to: day(now) })
}

/**
 * A period as the ISO weeks wholly inside it plus the days at its edges: summaries read whole
 * weeks from weekly tables and only the edge days from daily ones. `weeks` holds the Mondays of the
 * first and last whole week.
 */
export function splitWeeks(period: Period): {
  weeks: { first: string; last: string } | null
  edges: Period[]
} {
  const DAY = DAY_MS
  const from = msOf(period.from)
  const to = msOf(period.to)
  const weekday = (new Date(from).getUTCDay() + 6) % 7 // Monday 0 .. Sunday 6
  const firstMonday = from + ((7 - weekday) % 7) * DAY
  const whole = Math.floor((to - firstMonday) / DAY + 1) / 7
  const count = Math.floor(whole)
  if (count < 1) return { weeks: null, edges: [period] }
  const lastMonday = firstMonday + (count - 1) * 7 * DAY
  const edges: Period[] = []
  if (firstMonday > from) edges.push({ from: period.from, to: day(new Date(firstMonday - DAY)) })
  if (lastMonday + 6 * DAY < to) edges.push({ from: day(new Date(lastMonday + 7 * DAY)), to: period.to })
  return { weeks: { first: day(new Date(firstMonday)), last: day(new Date(lastMonday)) }, edges }
}

/** The first day of each calendar month (UTC) wholly inside the period, in order. */
export function wholeMonths(period: Period): string[] {
  const months: string[] = []
  const to = msOf(period.to)
  const start = new Date(msOf(period.from))
  // The first month that begins on or after `from`.
  let month = utcDay(start.getUTCFullYear(), start.getUTCMonth() + (start.getUTCDate() === 1 ? 0 : 1), 1)
  while (true) {
    const first = new Date(month)
    const next = utcDay(first.getUTCFullYear(), first.getUTCMonth() + 1, 1)
    if (next - DAY_MS > to) return months
    months.push(day(first))
    month = next
  }
}

/**
 * The parts of the period outside the given whole months (first days, in order, each wholly
 * inside the period): summaries read those months from monthly tables and only these parts, as
 * weeks and edge days, from the weekly and daily ones.
 */
export function outsideMonths(period: Period, months: readonly string[]): Period[] {
  const parts: Period[] = []
  const to = msOf(period.to)
  let from = msOf(period.from)
  for (const month of months) {
    const start = msOf(month)
    if (start > from) parts.push({ from: day(new Date(from)), to: day(new Date(start - DAY_MS)) })
    const first = new Date(start)
    from = utcDay(first.getUTCFullYear(), first.getUTCMonth() + 1, 1)
  }
  if (from <= to) parts.push({ from: day(new Date(from)), to: period.to })
  return parts
}

/** The period that begins `days` earlier. */
export function extendedBack(period: Period, days: number): Period {
  const from = msOf(period.from) - days * DAY_MS
  return { from: from < msOf(FIRST_DAY) ? FIRST_DAY : day(new Date(from)), to: period.to }
}
