import { t } from 'elysia'
import { ALERT_TYPES } from '../../domain/alerts/alert.ts'
import type { AlertFilters, StoredAlert } from '../../domain/alerts/ports.ts'
import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
import { dateTimeMs, END_INSTANT_MS, FIRST_INSTANT_MS } from '../../domain/reports/period.ts'
import { invalid, ok, type Result } from '../../domain/shared/result.ts'
import { JsonObject, JsonValue, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { Line } from '../../plugins/input-schemas.ts'
import { FixModel } from './posture.ts'
import { snakeCaseKeys } from './source-models.ts'

// Alert shapes and list filters (docs/alerts.md). Rules keep their evidence in camelCase (it is compared
// as stored); the API shows it in snake_case like every other field.

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const

export const AlertModel = t.Object({
  alert_id: t.String({ format: 'uuid' }),
  domain: t.Nullable(
    t.String({ description: 'null for account-wide alerts (webhook delivery, ingest quarantine)' }),
  ),
  type: t.String({
    description: `Stable snake_case rule id: ${ALERT_TYPES.join(', ')}`,
    examples: ['dmarc_missing'],
  }),
  subject: t.String({
    description:
      "Tells alerts of one type apart within a domain (a DKIM selector, `ip:192.0.2.1`); '' when one per domain",
  }),
  severity: t.UnionEnum(SEVERITIES),
  title: t.String({ examples: ['example.com publishes no DMARC record'] }),
  details: t.Object(
    {
      evidence: JsonObject({
        description: 'The figures and records behind the alert; its shape depends on the type',
      }),
      remedy: t.String({ description: 'What to do' }),
      fix: t.Optional(FixModel),
    },
    {
      description:
        '`evidence` (the figures and records behind the alert), `remedy` (what to do) and, when known, `fix` (the exact TXT record to publish)',
      additionalProperties: JsonValue,
    },
  ),
  status: t.UnionEnum(['open', 'resolved']),
  resolution: t.Nullable(
    t.UnionEnum(['condition_cleared', 'user'], {
      description: '`condition_cleared`: the service saw the condition end; `user`: resolved through the API',
    }),
  ),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time', description: 'Last change of severity, title or details' }),
  resolved_at: t.Nullable(t.String({ format: 'date-time' })),
})

export const alertModels = {
  Alert: AlertModel,
  AlertItem: t.Object({ data: AlertModel }),
  AlertList: t.Object({ data: t.Array(AlertModel), meta: PageMeta }),
}

function oneOf<T extends string>(values: readonly T[], description?: string) {
  return t.Union(
    values.map((value) => t.Literal(value)),
    description === undefined ? {} : { description },
  )
}

const TIME =
  'ISO 8601: a date (`2026-03-01`, UTC) or a timestamp with its offset (`2026-03-01T12:00:00Z`), from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'

export const AlertListQuery = t.Object({
  ...PaginationQuery,
  // Unions of literals, not UnionEnum: Elysia fills an absent UnionEnum query field with its first value.
  status: t.Optional(oneOf(['open', 'resolved', 'all'], 'Default `all`')),
  severity: t.Optional(oneOf(SEVERITIES)),
  domain: t.Optional(Line({ maxLength: 253, description: 'A domain name of the account' })),
  type: t.Optional(oneOf(ALERT_TYPES)),
  since: t.Optional(Line({ maxLength: 40, description: `Created at or after. ${TIME}` })),
  until: t.Optional(
    Line({ maxLength: 40, description: `Created at or before (a date: through its end). ${TIME}` }),
  ),
})

export function presentAlert(alert: StoredAlert) {
  return {
    alert_id: alert.alertId,
    domain: alert.domain,
    type: alert.type,
    subject: alert.subject,
    severity: alert.severity,
    title: alert.title,
    details: snakeCaseKeys(alert.details) as { evidence: Record<string, unknown>; remedy: string },
    status: alert.status,
    resolution: alert.resolution,
    created_at: alert.createdAt.toISOString(),
    updated_at: alert.updatedAt.toISOString(),
    resolved_at: alert.resolvedAt?.toISOString() ?? null,
  }
}

// Dates and timestamps of `since`/`until` (docs/api.md "Alerts"): ISO 8601 as RFC 3339 §5.6
// profiles it, but seconds may be left out; a time always has its offset; `T` may be lower case or
// a space (§5.6 NOTE).
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
 * created_at is POSIX time, which has none.
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
 * `since` as the store's bound (created_at at or after). created_at holds whole milliseconds (the
 * service's clock, a JS Date), so an instant between two rounds up to the next.
 */
const sinceBound = (since: Instant) => new Date(since.ns > 0 ? since.ms + 1 : since.ms)

/**
 * `until` as the store's bound, the first millisecond past it (created_at before); none when that
 * would be 10000-01-01: PostgreSQL refuses it as a parameter (toISOString writes `+010000-…`),
 * and no created_at is later than 9999-12-31T23:59:59.999Z, written from a JS Date the same way.
 */
const untilBound = (until: Instant) => (until.ms < LAST_MS ? new Date(until.ms + 1) : undefined)

/** The store's created_at bounds from `since` and `until`, both checked here. */
function timeFilters(query: {
  since?: string
  until?: string
}): Result<Pick<AlertFilters, 'since' | 'until'>> {
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

/** The store's filters from a validated query; dates and the domain name are checked here. */
export function alertFilters(query: typeof AlertListQuery.static): Result<AlertFilters> {
  const filters: AlertFilters = { status: query.status ?? 'all', severity: query.severity, type: query.type }
  if (query.domain !== undefined) {
    const checked = normalizeDomainName(query.domain)
    if (!checked.ok) return invalid('domain', checked.reason)
    filters.domain = checked.name
  }
  const times = timeFilters(query)
  if (!times.ok) return times
  return ok({ ...filters, ...times.value })
}
