import { Elysia } from 'elysia'
import { acceptInvitation, lookUpInvitation } from '../../domain/accounts/invitations.ts'
import { resumeSession } from '../../domain/accounts/sessions.ts'
import { sessionCookies, type sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import {
  invitationJoinView,
  invitationLoginView,
  invitationProblemStatus,
  invitationProblemView,
} from './invitation-views.ts'
import { htmlResponse, redirectTo } from './layout.ts'
import { memberStores } from './member-pages.ts'
import type { DashboardServices } from './services.ts'

// /invitations/{token}, the link an invitation mail carries (issue #8). Logged in with the invited
// email: a "Join" button (a CSRF-checked POST) adds the membership and moves the session to the
// account. Logged out: log in (or sign up) with that email and come back (`?next=`). Any other
// case is a page saying why; the token never shows in a Referer (Referrer-Policy: same-origin).

export function invitationPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const stores = memberStores(s)
  const cookies = sessionCookies(s.config.publicUrl)

  return new Elysia({ name: 'dashboard:invitations' })
    .use(sessions)
    .get('/invitations/:token', async ({ params, request }) => {
      const token = param(params.token)
      // Logged-out visitors are welcome here, so the session is looked up rather than required.
      const current = await resumeSession(s, { id: cookies.read(request, cookies.sessionName), now: s.now() })
      const session = current?.session ?? null
      if (session) noteAccount(request, session)
      const viewer = session ? viewerOf(session) : null
      const lookup = await lookUpInvitation(stores, { token, now: s.now(), email: session?.email ?? null })
      if (lookup.problem !== null)
        return htmlResponse(invitationProblemView({ ...lookup, problem: lookup.problem, viewer }), {
          status: invitationProblemStatus(lookup.problem),
        })
      const path = `/invitations/${token}`
      if (viewer === null) return htmlResponse(invitationLoginView({ invitation: lookup.invitation, path }))
      return htmlResponse(invitationJoinView({ invitation: lookup.invitation, viewer, action: path }))
    })
    .post(
      '/invitations/:token',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const result = await acceptInvitation(stores, { token: param(params.token), session, now: s.now() })
        if (!result.ok)
          return htmlResponse(invitationProblemView({ ...result, viewer: viewerOf(session) }), {
            status: invitationProblemStatus(result.problem),
          })
        s.logger.info('invitation accepted', { account_id: result.accountId })
        return redirectTo('/settings/account?joined=1')
      },
      { session: true, csrf: true },
    )
}
