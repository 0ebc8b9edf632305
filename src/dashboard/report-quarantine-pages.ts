import { Elysia } from 'elysia'
import type { sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import { htmlResponse, messagePage, redirectTo } from './layout.ts'
import { quarantineView } from './report-quarantine-views.ts'
import { pageOf, type Query } from './report-query.ts'
import type { DashboardServices } from './services.ts'

// /reports/quarantine and its Retry button: the intake store behind GET /api/v1/ingest/quarantine
// and POST /api/v1/ingest/quarantine/{id}/retry. Retry re-queues the message in the same
// transaction (pg-boss), so it needs the queue in this process.

const PER_PAGE = 50

export function quarantinePages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  return new Elysia({ name: 'dashboard:report-quarantine' })
    .use(sessions)
    .get(
      '/reports/quarantine',
      async ({ session, query, request }) => {
        noteAccount(request, session)
        const q = query as Query
        const page = pageOf(q)
        const found = await s.messages.listQuarantine(session.accountId, { page, perPage: PER_PAGE })
        return htmlResponse(
          quarantineView({
            viewer: viewerOf(session),
            messages: found.items,
            total: found.total,
            page,
            lastPage: Math.max(1, Math.ceil(found.total / PER_PAGE)),
            notice:
              q.retried === '1'
                ? 'The message is queued to be processed again. If it fails again, it comes back here with the reason.'
                : null,
          }),
        )
      },
      { session: true },
    )
    .post(
      '/reports/quarantine/:id/retry',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const viewer = viewerOf(session)
        if (s.boss === null) {
          return messagePage({
            status: 503,
            title: 'Report processing is not running',
            message: 'This server runs without the job queue, so messages cannot be processed again here.',
            viewer,
          })
        }
        if (!(await s.messages.retry(session.accountId, param(params.id)))) {
          return messagePage({
            status: 404,
            title: 'Message not found',
            message: 'This message is not in your quarantine (it may have been retried already).',
            viewer,
          })
        }
        return redirectTo('/reports/quarantine?retried=1')
      },
      { session: true, csrf: true },
    )
}
