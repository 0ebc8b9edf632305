import { Elysia } from 'elysia'
import {
  LOGIN_LINK_INVALID,
  loginLinkUsable,
  setFirstPassword,
  signInWithLink,
} from '../../domain/accounts/login-link.ts'
import { formOf, type SessionCookies, type sessionPlugin } from '../../plugins/session.ts'
import { anonymousCsrf } from './auth-pages.ts'
import { clientFacts, limited, noteAccount, param, publicPolicy, viewerOf } from './guards.ts'
import { htmlResponse, redirectTo } from './layout.ts'
import { firstPasswordView, loginLinkInvalidView, loginLinkView } from './login-link-views.ts'
import type { DashboardServices } from './services.ts'

// /login-link/{token}: the operator's one-time sign-in link (domain/accounts/login-link.ts). GET
// shows a button and spends nothing; POST signs in. A user without a password goes on to
// /settings/password to choose one, anyone else to their domains.

export function loginLinkPages(
  s: DashboardServices,
  sessions: ReturnType<typeof sessionPlugin>,
  cookies: SessionCookies,
) {
  const invalid = () => htmlResponse(loginLinkInvalidView(LOGIN_LINK_INVALID), { status: 400 })
  return new Elysia({ name: 'dashboard:login-link' })
    .use(sessions)
    .get('/login-link/:token', async ({ request, params }) => {
      const token = param(params.token)
      if (!(await loginLinkUsable(s, { token, now: s.now() }))) return invalid()
      const csrf = anonymousCsrf(s, cookies, request)
      return htmlResponse(loginLinkView({ csrf: csrf.token, token }), { cookies: csrf.cookies })
    })
    .post(
      '/login-link/:token',
      async ({ request, params, server }) => {
        const facts = clientFacts(s, request, server)
        const refused = await limited(s, [{ policy: publicPolicy(s), subject: facts.network }])
        if (refused) return refused
        const result = await signInWithLink(s, { token: param(params.token), now: s.now(), ...facts })
        if (!result.ok) return invalid()
        const { id, session, hasPassword } = result.value
        s.logger.info('signed in by a one-time link', { account_id: session.accountId })
        return redirectTo(hasPassword ? '/domains' : '/settings/password?welcome=1', [
          cookies.session(id, session.expiresAt, s.now()),
        ])
      },
      { anonymousCsrf: true },
    )
    .get(
      '/settings/password',
      async ({ session, query, request }) => {
        noteAccount(request, session)
        const user = await s.credentials.findByUserId(session.userId)
        if (user?.passwordHash) return redirectTo('/settings/account')
        return htmlResponse(firstPasswordView({ viewer: viewerOf(session), welcome: query.welcome === '1' }))
      },
      { session: true },
    )
    .post(
      '/settings/password',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const result = await setFirstPassword(s, {
          userId: session.userId,
          password: formOf(body).get('password') ?? '',
        })
        if (!result.ok) {
          const errors = result.failure.code === 'validation_failed' ? result.failure.errors : {}
          const view = firstPasswordView({ viewer: viewerOf(session), welcome: false, errors })
          return htmlResponse(view, { status: 400 })
        }
        return redirectTo('/domains?password_set=1')
      },
      { session: true, csrf: true },
    )
}
