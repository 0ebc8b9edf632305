import { Elysia, t } from 'elysia'
import type { ReportDomainIds } from '../../domain/reports/aggregate-reads.ts'
import type { FailureTlsReads } from '../../domain/reports/failure-tls-reads.ts'
import {
  getFailureReport,
  listFailureReports,
  tlsReportSummary,
} from '../../domain/reports/failure-tls-use-cases.ts'
import { pageMeta } from '../../domain/shared/pagination.ts'
import { apiModels, authErrors, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { DomainText, Line, RowId } from '../../plugins/input-schemas.ts'
import { FailureReportModel, presentFailureReport } from './forensic-models.ts'

const ForensicModel = t.Object({
  id: t.Integer(),
  domain: t.String(),
  arrival_date: t.Nullable(t.String({ format: 'date-time' })),
  source_ip: t.Nullable(t.String()),
  reported_domain: t.Nullable(t.String()),
  auth_failure: t.Nullable(t.String({ examples: ['dmarc'] })),
  delivery_result: t.Nullable(t.String()),
  redacted: t.Boolean({ description: 'Local parts of addresses replaced (the default)' }),
  report: FailureReportModel,
  received_at: t.String({ format: 'date-time' }),
})

const iso = (value: unknown) =>
  value === null || value === undefined ? null : new Date(value as string).toISOString()

function presentForensic(row: Record<string, unknown>) {
  return {
    id: Number(row.id),
    domain: String(row.domain),
    arrival_date: iso(row.arrival_at),
    source_ip: (row.source_ip as string | null) ?? null,
    reported_domain: (row.reported_domain as string | null) ?? null,
    auth_failure: (row.auth_failure as string | null) ?? null,
    delivery_result: (row.delivery_result as string | null) ?? null,
    redacted: Boolean(row.redacted),
    report: presentFailureReport(row.report),
    received_at: iso(row.received_at)!,
  }
}

const TlsSummaryModel = t.Object({
  period: t.Object({ from: t.String(), to: t.String() }),
  totals: t.Object({ successful_sessions: t.Integer(), failed_sessions: t.Integer(), reports: t.Integer() }),
  daily: t.Array(
    t.Object({ day: t.String(), successful_sessions: t.Integer(), failed_sessions: t.Integer() }),
  ),
  failure_types: t.Array(t.Object({ result_type: t.String(), sessions: t.Integer() })),
  reports: t.Array(
    t.Object({
      id: t.Integer(),
      organization: t.String(),
      report_id: t.String(),
      begin: t.String(),
      end: t.String(),
      successful_sessions: t.Integer(),
      failed_sessions: t.Integer(),
    }),
  ),
})

export interface ForensicTlsRouteDeps {
  failureTls: Pick<FailureTlsReads, 'listForensic' | 'forensic' | 'tlsSummary'>
  reports: ReportDomainIds
  auth: AuthDeps
  now: () => Date
}

export function forensicTlsRoutes(deps: ForensicTlsRouteDeps) {
  return new Elysia({ name: 'routes:forensic-tls', detail: { tags: ['DMARC reports'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      ForensicReport: ForensicModel,
      ForensicList: t.Object({ data: t.Array(ForensicModel), meta: PageMeta }),
      ForensicItem: t.Object({ data: ForensicModel }),
      TlsSummary: t.Object({ data: TlsSummaryModel }),
    })
    .get(
      '/dmarc-reports/forensic/reports',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        const found = unwrap(
          await listFailureReports(deps, {
            accountId: principal.accountId,
            domain: query.domain,
            since: query.since,
            until: query.until,
            sourceIp: query.source_ip,
            page,
          }),
        )
        return { data: found.items.map(presentForensic), meta: pageMeta(found.total, page) }
      },
      {
        auth: true,
        query: t.Object({
          ...PaginationQuery,
          domain: t.Optional(DomainText()),
          since: t.Optional(Line({ maxLength: 40, description: 'ISO 8601' })),
          until: t.Optional(Line({ maxLength: 40, description: 'ISO 8601' })),
          source_ip: t.Optional(Line({ maxLength: 45, description: 'An IPv4 or IPv6 address' })),
        }),
        response: { 200: 'ForensicList', ...authErrors, 403: 'Error' },
        detail: { summary: 'Failure (forensic, RUF) reports, newest first; addresses redacted by default' },
      },
    )
    .get(
      '/dmarc-reports/forensic/reports/:id',
      async ({ principal, params }) => {
        const row = unwrap(await getFailureReport(deps, { accountId: principal.accountId, id: params.id }))
        return { data: presentForensic(row) }
      },
      {
        auth: true,
        params: t.Object({ id: RowId() }),
        response: { 200: 'ForensicItem', ...authErrors, 404: 'Error' },
        detail: { summary: 'A failure report' },
      },
    )
    .get(
      '/domains/:name/tls-reports',
      async ({ principal, params, query }) => {
        const found = unwrap(
          await tlsReportSummary(deps, {
            accountId: principal.accountId,
            domain: params.name,
            period: query,
          }),
        )
        return { data: { period: found.period, ...found.summary } }
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        query: t.Object({
          days: t.Optional(t.Integer({ minimum: 1, maximum: 90 })),
          from: t.Optional(t.String({ format: 'date' })),
          to: t.Optional(t.String({ format: 'date' })),
        }),
        response: { 200: 'TlsSummary', ...authErrors, 403: 'Error' },
        detail: { summary: 'TLS-RPT (RFC 8460) summary of a domain: sessions, failures by type, reports' },
      },
    )
}
