import type { Period } from '../reports/period.ts'

// When a digest is due (docs/notifications.md "Mail"): daily at 08:00 and weekly on Monday at
// 08:00, in the account's IANA time zone. An hourly scheduler asks each account; once 08:00 of the
// local day has passed the digest of that day is due, and digest_runs keeps it to one per day (or
// week), so a scheduler run missed at 08:xx (a restart) is caught up later that day.

export type DigestFrequency = 'daily' | 'weekly'

export const DIGEST_HOUR = 8

interface LocalTime {
  date: string
  hour: number
  weekday: string
}

function localTime(now: Date, timeZone: string): LocalTime {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    hourCycle: 'h23',
    weekday: 'short',
  }).formatToParts(now)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return {
    date: `${part('year')}-${part('month')}-${part('day')}`,
    hour: Number(part('hour')),
    weekday: part('weekday'),
  }
}

/** The local date whose digest is due at `now`, or null (before 08:00; weekly: not a Monday). */
export function digestDue(now: Date, timeZone: string, frequency: DigestFrequency): string | null {
  const local = localTime(now, timeZone)
  if (local.hour < DIGEST_HOUR) return null
  if (frequency === 'weekly' && local.weekday !== 'Mon') return null
  return local.date
}

const DAY_MS = 86_400_000
const shift = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)

/**
 * The days a digest of `localDate` covers, and the period before it for the change: the day before
 * (daily) or the seven days before (weekly), as the UTC days the reports are counted in.
 */
export function digestPeriods(
  localDate: string,
  frequency: DigestFrequency,
): { current: Period; previous: Period } {
  const days = frequency === 'daily' ? 1 : 7
  const to = shift(localDate, -1)
  const from = shift(to, -(days - 1))
  return { current: { from, to }, previous: { from: shift(from, -days), to: shift(from, -1) } }
}
