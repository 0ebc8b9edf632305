import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { AlertSeverity } from '../../domain/alerts/alert.ts'
import { listDomains } from '../../domain/domains/use-cases.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import {
  type AlertListFilters,
  type AlertStatusFilter,
  alertDetailView,
  alertListView,
  SEVERITIES,
  STATUSES,
} from './alert-views.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import { htmlResponse, messagePage, redirectTo } from './layout.ts'
import { idOf } from './report-query.ts'
import type { DashboardServices } from './services.ts'

// /alerts (filters: status, severity, domain; 50 a page), /alerts/{id} and its resolve button,
// read through the same store as the alerts API, scoped by the session's account.

const PER_PAGE = 50

export function alertPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const notFound = (session: ActiveSession) =>
    messagePage({
      status: 404,
      title: 'Alert not found',
      message: 'This alert is not in your account.',
      viewer: viewerOf(session),
    })

  return new Elysia({ name: 'dashboard:alerts' })
    .use(sessions)
    .get(
      '/alerts',
      async ({ session, query, request }) => {
        noteAccount(request, session)
        const q = query as Record<string, string | undefined>
        const filters: AlertListFilters = {
          status: (STATUSES as readonly string[]).includes(q.status ?? '')
            ? (q.status as AlertStatusFilter)
            : 'open',
          severity: (SEVERITIES as readonly string[]).includes(q.severity ?? '')
            ? (q.severity as AlertSeverity)
            : null,
          domain: (q.domain ?? '').trim().toLowerCase().slice(0, 253),
        }
        const page = /^[1-9]\d{0,5}$/.test(q.page ?? '') ? Number(q.page) : 1
        const [found, domains] = await Promise.all([
          s.alerts.list(
            session.accountId,
            {
              status: filters.status,
              severity: filters.severity ?? undefined,
              domain: filters.domain === '' ? undefined : filters.domain,
            },
            { page, perPage: PER_PAGE },
          ),
          listDomains(s, session.accountId, {}, { page: 1, perPage: 200 }),
        ])
        return htmlResponse(
          alertListView({
            viewer: viewerOf(session),
            alerts: found.items,
            total: found.total,
            page,
            lastPage: Math.max(1, Math.ceil(found.total / PER_PAGE)),
            filters,
            domains: domains.items.map((d) => d.name),
          }),
        )
      },
      { session: true },
    )
    .get(
      '/alerts/:id',
      async ({ session, params, query, request }) => {
        noteAccount(request, session)
        const number = idOf(param(params.id))
        if (number === null) {
          // A link from a mail sent before alerts had numbers names the alert's uuid.
          const renamed = await s.alerts.numberOf(session.accountId, param(params.id))
          if (renamed !== null) return redirectTo(`/alerts/${renamed}`)
        }
        const alert = number === null ? null : await s.alerts.get(session.accountId, number)
        if (alert === null) return notFound(session)
        const notice = (query as Record<string, string>).resolved === '1' ? 'The alert is resolved.' : null
        return htmlResponse(alertDetailView({ viewer: viewerOf(session), alert, notice }))
      },
      { session: true },
    )
    .post(
      '/alerts/:id/resolve',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const number = idOf(param(params.id))
        const alert = number === null ? null : await s.alerts.resolve(session.accountId, number, s.now())
        if (alert === null) return notFound(session)
        return redirectTo(`/alerts/${alert.number}?resolved=1`)
      },
      { session: true, csrf: true },
    )
}
