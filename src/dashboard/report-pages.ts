import { Elysia } from 'elysia'
import { listDomains } from '../../domain/domains/use-cases.ts'
import { periodOf } from '../../domain/reports/period.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, viewerOf } from './guards.ts'
import { htmlResponse } from './layout.ts'
import { forensicTlsPages } from './report-forensic-tls-pages.ts'
import { reportListPages } from './report-list-pages.ts'
import { quarantinePages } from './report-quarantine-pages.ts'
import { uploadPages } from './report-upload-pages.ts'
import { type DomainReports, reportsView } from './report-views.ts'
import type { DashboardServices } from './services.ts'

// /reports: the account overview of the last 30 days from the same reader as
// GET /api/v1/dmarc-reports/overview, and the latest reports of each domain. The other report
// pages (docs/dashboard-reports.md) are their own modules, mounted here.

const DOMAINS_SHOWN = 20
const REPORTS_PER_DOMAIN = 5

export function reportPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  return new Elysia({ name: 'dashboard:reports' })
    .use(sessions)
    .use(forensicTlsPages(s, sessions))
    .use(quarantinePages(s, sessions))
    .use(uploadPages(s, sessions))
    .use(reportListPages(s, sessions))
    .get(
      '/reports',
      async ({ session, request }) => {
        noteAccount(request, session)
        const found = periodOf({}, s.now())
        if (!found.ok) throw new Error('the default period is always valid')
        const period = found.value
        const [summary, domains] = await Promise.all([
          s.reports.summary(session.accountId, null, period),
          listDomains(s, session.accountId, {}, { page: 1, perPage: DOMAINS_SHOWN }),
        ])
        const perDomain: DomainReports[] = await Promise.all(
          domains.items.map(async (domain) => {
            const id = await s.reports.domainId(session.accountId, domain.name)
            const reports =
              id === null
                ? { items: [], total: 0 }
                : await s.reports.listReports(session.accountId, id, period, {
                    page: 1,
                    perPage: REPORTS_PER_DOMAIN,
                  })
            return { name: domain.name, reports: reports.items, total: reports.total }
          }),
        )
        // An empty month offers the period holding the latest report (docs/dashboard-reports.md).
        const latest =
          summary.totals.reports === 0 ? await s.reports.latestReportAt(session.accountId, null) : null
        return htmlResponse(
          reportsView({
            viewer: viewerOf(session),
            period,
            summary,
            domains: perDomain,
            moreDomains: domains.total > domains.items.length,
            latest,
          }),
        )
      },
      { session: true },
    )
}
