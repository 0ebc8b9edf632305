import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { timeFilters } from '../../domain/reports/time-filters.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, viewerOf } from './guards.ts'
import { htmlResponse, messagePage } from './layout.ts'
import { failureDetailView, failureListView } from './report-failure-views.ts'
import { idOf, listedPage, type Query, reportFilterOf } from './report-query.ts'
import { tlsDetailView } from './report-tls-detail-views.ts'
import { tlsView } from './report-tls-views.ts'
import type { DashboardServices } from './services.ts'

// /reports/failures[/{id}] and /reports/tls[/{id}]: the store behind GET /api/v1/dmarc-reports/forensic/…
// and GET /api/v1/domains/{name}/tls-reports, scoped by the session's account.

const PER_PAGE = 25

export function forensicTlsPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const notFound = (session: ActiveSession, title: string, message: string) =>
    messagePage({ status: 404, title, message, viewer: viewerOf(session) })

  return new Elysia({ name: 'dashboard:report-forensic-tls' })
    .use(sessions)
    .get(
      '/reports/failures',
      async ({ session, query, request }) => {
        noteAccount(request, session)
        const filter = await reportFilterOf(s, session.accountId, query as Query, false)
        if (filter.choice.unknown)
          return notFound(session, 'Domain not found', 'This domain is not in your account.')
        // The period's days whole, in UTC, against the arrival date (else the time we received it),
        // bounded as the API's since/until are: the period is valid, so its days always are.
        const { period } = filter.period
        const times = timeFilters({ since: period.from, until: period.to })
        const found = await s.forensicTls.listForensic(
          session.accountId,
          { domainId: filter.choice.domainId ?? undefined, ...(times.ok ? times.value : {}) },
          { page: filter.page, perPage: PER_PAGE },
        )
        return htmlResponse(
          failureListView({ viewer: viewerOf(session), ...listedPage(filter, found, PER_PAGE) }),
        )
      },
      { session: true },
    )
    .get(
      '/reports/failures/:id',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const id = idOf(params.id)
        const row = id === null ? null : await s.forensicTls.forensic(session.accountId, id)
        if (row === null)
          return notFound(session, 'Report not found', 'This failure report is not in your account.')
        return htmlResponse(failureDetailView({ viewer: viewerOf(session), row }))
      },
      { session: true },
    )
    .get(
      '/reports/tls',
      async ({ session, query, request }) => {
        noteAccount(request, session)
        // One domain at a time: without a choice, the first.
        const { period, choice } = await reportFilterOf(s, session.accountId, query as Query, true)
        if (choice.unknown)
          return notFound(session, 'Domain not found', 'This domain is not in your account.')
        const summary =
          choice.domainId === null
            ? null
            : await s.forensicTls.tlsSummary(
                session.accountId,
                choice.domainId,
                period.period.from,
                period.period.to,
              )
        return htmlResponse(
          tlsView({
            viewer: viewerOf(session),
            domains: choice.names,
            domain: choice.selected,
            period,
            summary,
          }),
        )
      },
      { session: true },
    )
    .get(
      '/reports/tls/:id',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const id = idOf(params.id)
        const row = id === null ? null : await s.forensicTls.tlsReport(session.accountId, id)
        if (row === null)
          return notFound(session, 'Report not found', 'This TLS report is not in your account.')
        return htmlResponse(tlsDetailView({ viewer: viewerOf(session), row }))
      },
      { session: true },
    )
}
