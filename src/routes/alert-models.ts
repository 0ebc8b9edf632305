import { t } from 'elysia'
import { ALERT_TYPES } from '../../domain/alerts/alert.ts'
import type { AlertFilters, StoredAlert } from '../../domain/alerts/ports.ts'
import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
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

const TIME = 'ISO 8601: a date (`2026-03-01`, UTC) or a timestamp with its offset (`2026-03-01T12:00:00Z`)'

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

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/
const DAY_MS = 86_400_000

/**
 * A date or an offset-bearing timestamp, as the instant a filter starts (`since`) or the first
 * instant past it (`until`, exclusive in storage): a date for `until` covers its whole day, a
 * timestamp itself. A timestamp without an offset is refused rather than read in some time zone.
 */
function instant(field: string, text: string, end: boolean): Result<Date> {
  const message = `The ${field} field must be an ISO 8601 date or a timestamp with a time zone offset.`
  const date = DATE.exec(text)
  if (date !== null) {
    const ms = Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!)
    if (new Date(ms).toISOString().slice(0, 10) !== text) return invalid(field, message)
    return ok(new Date(end ? ms + DAY_MS : ms))
  }
  const ms = TIMESTAMP.test(text) ? Date.parse(text.replace(' ', 'T')) : Number.NaN
  if (Number.isNaN(ms)) return invalid(field, message)
  return ok(new Date(end ? ms + 1 : ms))
}

/** The store's filters from a validated query; dates and the domain name are checked here. */
export function alertFilters(query: typeof AlertListQuery.static): Result<AlertFilters> {
  const filters: AlertFilters = { status: query.status ?? 'all', severity: query.severity, type: query.type }
  if (query.domain !== undefined) {
    const checked = normalizeDomainName(query.domain)
    if (!checked.ok) return invalid('domain', checked.reason)
    filters.domain = checked.name
  }
  if (query.since !== undefined) {
    const since = instant('since', query.since, false)
    if (!since.ok) return since
    filters.since = since.value
  }
  if (query.until !== undefined) {
    const until = instant('until', query.until, true)
    if (!until.ok) return until
    filters.until = until.value
  }
  if (filters.since !== undefined && filters.until !== undefined && filters.until <= filters.since)
    return invalid('until', 'The until field must not be before since.')
  return ok(filters)
}
