import { t } from 'elysia'
import { ALERT_TYPES } from '../../domain/alerts/alert.ts'
import type { AlertFilters, StoredAlert } from '../../domain/alerts/ports.ts'
import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
import { timeFilters } from '../../domain/reports/time-filters.ts'
import { invalid, ok, type Result } from '../../domain/shared/result.ts'
import { JsonObject, JsonValue, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { Line } from '../../plugins/input-schemas.ts'
import { FixModel } from './posture.ts'
import { snakeCaseKeys } from './source-models.ts'

// Alert shapes and list filters (docs/alerts.md). Rules keep their evidence in camelCase (it is compared
// as stored); the API shows it in snake_case like every other field.

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const

export const AlertModel = t.Object({
  alert_id: t.Integer({ minimum: 1, description: 'The alert’s id, an integer' }),
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
    alert_id: alert.number,
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
