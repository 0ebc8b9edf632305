import { Elysia, t } from 'elysia'
import type { AggregateReportReads } from '../../domain/reports/aggregate-reads.ts'
import {
  domainReportSummary,
  getDomainReport,
  type LatestWhenEmpty,
  latestWhenEmpty,
  listDomainReports,
  reportOverview,
} from '../../domain/reports/aggregate-use-cases.ts'
import { pageMeta } from '../../domain/shared/pagination.ts'
import { apiModels, authErrors, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { DomainText, RowId } from '../../plugins/input-schemas.ts'
import {
  AggregateRecordModel,
  PolicyPublishedModel,
  presentAggregateRecord,
  presentPolicyPublished,
} from './report-detail-models.ts'

export const PeriodQuery = {
  days: t.Optional(
    t.Integer({ minimum: 1, maximum: 90, description: 'The last N days (default 30, at most 90)' }),
  ),
  from: t.Optional(
    t.String({
      format: 'date',
      description: 'First day (ISO date); from/to span at most 366 days',
    }),
  ),
  to: t.Optional(t.String({ format: 'date', description: 'Last day (ISO date, default today)' })),
}

/**
 * `meta.latest_report_at`, only when the period holds no report: where the domain's (the account's,
 * for the overview) most recent report begins, so a client can offer a period that shows it; null
 * when there is no report at all.
 */
export const LatestReportAt = t.Optional(
  t.Nullable(
    t.String({
      format: 'date-time',
      description:
        'Only when the period holds no report: the begin of the most recent report (null: none at all)',
    }),
  ),
)

/**
 * The meta an empty period adds (docs/api.md "DMARC reports and periods"); nothing when the period
 * has reports.
 */
export async function emptyPeriodMeta(
  reports: Pick<AggregateReportReads, 'latestReportAt'>,
  accountId: string,
  domainId: number | null,
  empty: boolean,
): Promise<{ latest_report_at?: string | null }> {
  return presentLatest(await latestWhenEmpty({ reports }, { accountId, domainId, empty }))
}

/** `meta.latest_report_at` of a use case's answer: only when the period held no report. */
function presentLatest({ latestReportAt }: LatestWhenEmpty): { latest_report_at?: string | null } {
  if (latestReportAt === undefined) return {}
  return { latest_report_at: latestReportAt === null ? null : latestReportAt.toISOString() }
}

const ReportModel = t.Object({
  id: t.Integer(),
  reporter: t.Object({ org_name: t.String(), email: t.Nullable(t.String()) }),
  report_id: t.String(),
  policy_domain: t.String(),
  begin: t.String({ format: 'date-time' }),
  end: t.String({ format: 'date-time' }),
  record_count: t.Integer(),
  message_count: t.Integer({ description: 'Sum of the records’ counts' }),
  duplicates_seen: t.Integer({
    description: 'Times the same report arrived again (acknowledged, not stored)',
  }),
  variant: t.String(),
  received_at: t.String({ format: 'date-time' }),
})

const iso = (value: unknown) => (value instanceof Date ? value : new Date(String(value))).toISOString()

function presentReport(row: Record<string, unknown>) {
  return {
    id: Number(row.id),
    reporter: { org_name: String(row.reporter_org), email: (row.reporter_email as string | null) ?? null },
    report_id: String(row.report_id),
    policy_domain: String(row.policy_domain),
    begin: iso(row.begin_at),
    end: iso(row.end_at),
    record_count: Number(row.record_count),
    message_count: Number(row.message_count),
    duplicates_seen: Number(row.duplicates_seen),
    variant: String(row.variant),
    received_at: iso(row.received_at),
  }
}

const SummaryModel = t.Object({
  period: t.Object({ from: t.String({ format: 'date' }), to: t.String({ format: 'date' }) }),
  totals: t.Object({
    messages: t.Integer(),
    dmarc_pass: t.Integer(),
    dkim_aligned: t.Integer(),
    spf_aligned: t.Integer(),
    reports: t.Integer({
      description: 'Reports overlapping the period, each once (as listed), zero-record reports included',
    }),
  }),
  rates: t.Object(
    {
      dmarc_pass: t.Nullable(t.Number()),
      dkim_aligned: t.Nullable(t.Number()),
      spf_aligned: t.Nullable(t.Number()),
    },
    { description: 'Percent of messages (weighted by count); null without data' },
  ),
  daily: t.Array(
    t.Object({
      day: t.String(),
      messages: t.Integer(),
      dmarc_pass: t.Integer(),
      dkim_aligned: t.Integer(),
      spf_aligned: t.Integer(),
    }),
  ),
  dispositions: t.Array(t.Object({ disposition: t.String(), messages: t.Integer() })),
  top_failing_sources: t.Array(
    t.Object({
      source_ip: t.String(),
      ptr: t.Nullable(t.String()),
      failing: t.Integer({ description: 'Messages aligned by neither DKIM nor SPF' }),
    }),
  ),
  reporters: t.Array(t.Object({ org_name: t.String(), reports: t.Integer(), messages: t.Integer() })),
  policy_distribution: t.Optional(t.Array(t.Object({ policy: t.String(), domains: t.Integer() }))),
})

export interface ReportRouteDeps {
  reports: Pick<
    AggregateReportReads,
    'domainId' | 'listReports' | 'report' | 'summary' | 'latestReportAt' | 'policyDistribution'
  >
  auth: AuthDeps
  now: () => Date
}

export function reportRoutes(deps: ReportRouteDeps) {
  return new Elysia({ name: 'routes:reports', detail: { tags: ['DMARC reports'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      AggregateReport: ReportModel,
      AggregateReportPolicy: PolicyPublishedModel,
      AggregateRecord: AggregateRecordModel,
      AggregateReportList: t.Object({
        data: t.Array(ReportModel),
        meta: t.Object({ ...PageMeta.properties, latest_report_at: LatestReportAt }),
      }),
      AggregateReportDetail: t.Object({
        data: t.Object({
          ...ReportModel.properties,
          policy: PolicyPublishedModel,
          errors: t.Array(t.String()),
          records: t.Array(AggregateRecordModel),
        }),
        meta: PageMeta,
      }),
      ReportSummary: t.Object({
        data: SummaryModel,
        meta: t.Optional(t.Object({ latest_report_at: LatestReportAt })),
      }),
    })
    .get(
      '/domains/:name/reports',
      async ({ principal, params, query }) => {
        const page = pageRequest(query)
        const found = unwrap(
          await listDomainReports(deps, {
            accountId: principal.accountId,
            domain: params.name,
            period: query,
            page,
          }),
        )
        return {
          data: found.items.map(presentReport),
          meta: { ...pageMeta(found.total, page), ...presentLatest(found) },
        }
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        query: t.Object({ ...PeriodQuery, ...PaginationQuery }),
        response: { 200: 'AggregateReportList', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'Aggregate reports of a domain (last 30 days by default; from/to up to 366 days)',
          description:
            'Reports overlapping the period, newest first. When the period holds none, `meta.latest_report_at` says where the most recent report begins (null: none at all).',
        },
      },
    )
    .get(
      '/domains/:name/reports/:id',
      async ({ principal, params, query }) => {
        const page = pageRequest(query)
        const found = unwrap(
          await getDomainReport(deps, {
            accountId: principal.accountId,
            domain: params.name,
            id: params.id,
            page,
          }),
        )
        return {
          data: {
            ...presentReport(found.report),
            policy: presentPolicyPublished(found.report.policy),
            errors: (found.report.errors as string[]) ?? [],
            records: found.records.map(presentAggregateRecord),
          },
          meta: pageMeta(found.total, page),
        }
      },
      {
        auth: true,
        params: t.Object({ name: DomainText(), id: RowId() }),
        query: t.Object(PaginationQuery),
        response: { 200: 'AggregateReportDetail', ...authErrors, 403: 'Error', 404: 'Error' },
        detail: { summary: 'An aggregate report with its records (records paginated, largest count first)' },
      },
    )
    .get(
      '/dmarc-reports/overview',
      async ({ principal, query }) => {
        const found = unwrap(await reportOverview(deps, { accountId: principal.accountId, period: query }))
        const meta = presentLatest(found)
        return {
          data: { period: found.period, ...found.summary, policy_distribution: found.policies },
          ...(meta.latest_report_at === undefined ? {} : { meta }),
        }
      },
      {
        auth: true,
        query: t.Object(PeriodQuery),
        response: { 200: 'ReportSummary', ...authErrors },
        detail: {
          summary: 'Account overview: totals, pass rates, daily series, policies, failing sources, reporters',
          description:
            'Over the period (`days` 1-90, or `from`/`to` up to 366 days). When it holds no report, `meta.latest_report_at` says where the account’s most recent report begins.',
        },
      },
    )
    .get(
      '/dmarc-reports/domains/:domain/summary',
      async ({ principal, params, query }) => {
        const found = unwrap(
          await domainReportSummary(deps, {
            accountId: principal.accountId,
            domain: params.domain,
            period: query,
          }),
        )
        const meta = presentLatest(found)
        return {
          data: { period: found.period, ...found.summary },
          ...(meta.latest_report_at === undefined ? {} : { meta }),
        }
      },
      {
        auth: true,
        params: t.Object({ domain: DomainText() }),
        query: t.Object(PeriodQuery),
        response: { 200: 'ReportSummary', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'Report summary of a domain',
          description:
            'Over the period (`days` 1-90, or `from`/`to` up to 366 days). When it holds no report, `meta.latest_report_at` says where the domain’s most recent report begins.',
        },
      },
    )
}
