import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, viewerOf } from './guards.ts'
import { htmlResponse, messagePage } from './layout.ts'
import { reportDetailView } from './report-detail-views.ts'
import { reportListView } from './report-list-views.ts'
import { askedDomainOf, idOf, listedPage, pageOf, type Query, reportFilterOf } from './report-query.ts'
import type { DashboardServices } from './services.ts'

// /reports/list and /reports/{id}: aggregate reports through the reader behind
// GET /api/v1/domains/{name}/reports[/{id}]. The reader is always scoped by the account; without a
// domain it reads all of the account's domains. Another account's domain or report is not found.

const PER_PAGE = 25
const RECORDS_PER_PAGE = 100

export function reportListPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const notFound = (session: ActiveSession, what: 'Domain' | 'Report') =>
    messagePage({
      status: 404,
      title: `${what} not found`,
      message: `This ${what.toLowerCase()} is not in your account.`,
      viewer: viewerOf(session),
    })

  return new Elysia({ name: 'dashboard:report-list' })
    .use(sessions)
    .get(
      '/reports/list',
      async ({ session, query, request }) => {
        noteAccount(request, session)
        const filter = await reportFilterOf(s, session.accountId, query as Query, false)
        if (filter.choice.unknown) return notFound(session, 'Domain')
        // No domain chosen: all of the account's domains.
        const found = await s.reports.listReports(
          session.accountId,
          filter.choice.domainId,
          filter.period.period,
          { page: filter.page, perPage: PER_PAGE },
        )
        // An empty period offers the one holding the latest report (docs/dashboard-reports.md).
        const latest =
          found.total === 0 ? await s.reports.latestReportAt(session.accountId, filter.choice.domainId) : null
        return htmlResponse(
          reportListView({ viewer: viewerOf(session), ...listedPage(filter, found, PER_PAGE), latest }),
        )
      },
      { session: true },
    )
    .get(
      '/reports/:id',
      async ({ session, params, query, request }) => {
        noteAccount(request, session)
        const q = query as Query
        const id = idOf(params.id)
        if (id === null) return notFound(session, 'Report')
        // ?domain= is optional (older links carry it); when present, the report must be that domain's.
        const name = askedDomainOf(q)
        const domainId = name === '' ? null : await s.reports.domainId(session.accountId, name)
        if (name !== '' && domainId === null) return notFound(session, 'Report')
        const page = pageOf(q)
        const found = await s.reports.report(session.accountId, domainId, id, {
          page,
          perPage: RECORDS_PER_PAGE,
        })
        if (found === null) return notFound(session, 'Report')
        return htmlResponse(
          reportDetailView({
            viewer: viewerOf(session),
            domain: String(found.report.domain),
            report: found.report,
            records: found.records,
            total: found.total,
            page,
            lastPage: Math.max(1, Math.ceil(found.total / RECORDS_PER_PAGE)),
          }),
        )
      },
      { session: true },
    )
}
