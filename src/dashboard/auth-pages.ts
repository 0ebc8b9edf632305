import { encodeBase64urlNoPadding } from '@oslojs/encoding'
import { Elysia } from 'elysia'
import { logIn, signUp } from '../../domain/accounts/password-login.ts'
import {
  completePasswordReset,
  RESET_LINK_INVALID,
  requestPasswordReset,
  resetTokenUsable,
} from '../../domain/accounts/password-reset.ts'
import { endSession, resumeSession } from '../../domain/accounts/sessions.ts'
import { consume } from '../../domain/rate-limits/fixed-window.ts'
import { normalizeEmail } from '../../domain/shared/email-address.ts'
import { errorFields } from '../../domain/shared/logger.ts'
import { formOf, type SessionCookies, safeNext, type sessionPlugin } from '../../plugins/session.ts'
import {
  loginView,
  resetFormView,
  resetInvalidView,
  resetMailText,
  resetRequestView,
  signupView,
} from './auth-views.ts'
import { clientFacts, limited, loginPolicy, param, publicPolicy, RESET_MAIL_POLICY } from './guards.ts'
import { htmlResponse, redirectTo } from './layout.ts'
import { loginProviders } from './oauth-views.ts'
import type { DashboardServices } from './services.ts'

// Login, sign-up, logout and password reset (docs/dashboard.md).

/** The pre-session CSRF token of the login and sign-up forms: the cookie's, or a new one. */
export function anonymousCsrf(
  s: Pick<DashboardServices, 'random'>,
  cookies: SessionCookies,
  request: Request,
): { token: string; cookies: string[] } {
  const existing = cookies.read(request, cookies.csrfName)
  if (existing !== null && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: existing, cookies: [] }
  const token = encodeBase64urlNoPadding(s.random(32))
  return { token, cookies: [cookies.csrf(token)] }
}

export function authPages(
  s: DashboardServices,
  sessions: ReturnType<typeof sessionPlugin>,
  cookies: SessionCookies,
) {
  const anonymousToken = (request: Request) => anonymousCsrf(s, cookies, request)
  const providers = loginProviders(s)
  const currentSession = async (request: Request) =>
    resumeSession(s, { id: cookies.read(request, cookies.sessionName), now: s.now() })
  const started = (id: string, expiresAt: Date) => cookies.session(id, expiresAt, s.now())

  return new Elysia({ name: 'dashboard:auth' })
    .use(sessions)
    .get('/', async ({ request }) => redirectTo((await currentSession(request)) ? '/domains' : '/login'))
    .get('/login', async ({ request, query }) => {
      const next = typeof query.next === 'string' ? query.next : null
      if (await currentSession(request)) return redirectTo(safeNext(next))
      const csrf = anonymousToken(request)
      const notice = query.logged_out === '1' ? 'You are logged out.' : null
      return htmlResponse(loginView({ csrf: csrf.token, next, notice, providers }), { cookies: csrf.cookies })
    })
    .post(
      '/login',
      async ({ request, body, server }) => {
        const form = formOf(body)
        const email = form.get('email') ?? ''
        const facts = clientFacts(s, request, server)
        const refused = await limited(s, [
          { policy: publicPolicy(s), subject: facts.network },
          { policy: loginPolicy(s), subject: normalizeEmail(email) ?? email.trim().toLowerCase() },
        ])
        if (refused) return refused
        const result = await logIn(s, { email, password: form.get('password') ?? '', now: s.now(), ...facts })
        if (!result.ok) {
          const csrf = anonymousToken(request)
          const view = loginView({
            csrf: csrf.token,
            next: form.get('next'),
            email,
            error: 'Wrong email or password.',
            providers,
          })
          // 400 like every refused form (401 would need a WWW-Authenticate challenge).
          return htmlResponse(view, { status: 400, cookies: csrf.cookies })
        }
        const { id, session } = result.value
        return redirectTo(safeNext(form.get('next')), [started(id, session.expiresAt)])
      },
      { anonymousCsrf: true },
    )
    .get('/signup', async ({ request, query }) => {
      const next = typeof query.next === 'string' ? safeNext(query.next) : null
      if (await currentSession(request)) return redirectTo(next ?? '/domains')
      const csrf = anonymousToken(request)
      return htmlResponse(signupView({ csrf: csrf.token, providers, next }), { cookies: csrf.cookies })
    })
    .post(
      '/signup',
      async ({ request, body, server }) => {
        const form = formOf(body)
        const facts = clientFacts(s, request, server)
        const refused = await limited(s, [{ policy: publicPolicy(s), subject: facts.network }])
        if (refused) return refused
        const email = form.get('email') ?? ''
        const result = await signUp(s, {
          email,
          password: form.get('password') ?? '',
          now: s.now(),
          ...facts,
        })
        if (!result.ok) {
          const errors = result.failure.code === 'validation_failed' ? result.failure.errors : {}
          const csrf = anonymousToken(request)
          const next = form.get('next') ? safeNext(form.get('next')) : null
          return htmlResponse(signupView({ csrf: csrf.token, email, errors, providers, next }), {
            status: 400,
            cookies: csrf.cookies,
          })
        }
        const { id, session } = result.value
        s.logger.info('account signed up', { account_id: session.accountId })
        // `next` (a local path, e.g. an invitation link) is where the new user goes on.
        return redirectTo(safeNext(form.get('next')), [started(id, session.expiresAt)])
      },
      { anonymousCsrf: true },
    )
    .post(
      '/logout',
      async ({ session }) => {
        await endSession(s, { session })
        return redirectTo('/login?logged_out=1', [cookies.clear(cookies.sessionName)])
      },
      { session: true, csrf: true },
    )
    .get('/password-reset', ({ request }) => {
      const csrf = anonymousToken(request)
      return htmlResponse(resetRequestView({ csrf: csrf.token, sent: false }), { cookies: csrf.cookies })
    })
    .post(
      '/password-reset',
      async ({ request, body, server }) => {
        const facts = clientFacts(s, request, server)
        const refused = await limited(s, [{ policy: publicPolicy(s), subject: facts.network }])
        if (refused) return refused
        await requestPasswordReset(
          {
            ...s,
            mayMail: async (email) =>
              (await consume(s, { policy: RESET_MAIL_POLICY, subject: email, now: s.now() })).allowed,
            // Not awaited: the answer must not take longer when the address has an account.
            sendResetMail: (mail) => {
              const link = `${s.config.publicUrl}/password-reset/${mail.token}`
              s.mailer
                .send({
                  to: mail.to,
                  subject: 'Reset your dmarcwatch password',
                  text: resetMailText({ link, publicUrl: s.config.publicUrl }),
                })
                .catch((error) => s.logger.error('password reset mail failed', errorFields(error)))
            },
          },
          { email: formOf(body).get('email') ?? '', now: s.now() },
        )
        const csrf = anonymousToken(request)
        return htmlResponse(resetRequestView({ csrf: csrf.token, sent: true }), { cookies: csrf.cookies })
      },
      { anonymousCsrf: true },
    )
    .get('/password-reset/:token', async ({ request, params }) => {
      if (!(await resetTokenUsable(s, { token: param(params.token), now: s.now() })))
        return htmlResponse(resetInvalidView(RESET_LINK_INVALID), { status: 400 })
      const csrf = anonymousToken(request)
      return htmlResponse(resetFormView({ csrf: csrf.token, token: param(params.token) }), {
        cookies: csrf.cookies,
      })
    })
    .post(
      '/password-reset/:token',
      async ({ request, params, body, server }) => {
        const facts = clientFacts(s, request, server)
        const refused = await limited(s, [{ policy: publicPolicy(s), subject: facts.network }])
        if (refused) return refused
        const result = await completePasswordReset(s, {
          token: param(params.token),
          password: formOf(body).get('password') ?? '',
          now: s.now(),
          ...facts,
        })
        if (!result.ok) {
          const errors = result.failure.code === 'validation_failed' ? result.failure.errors : {}
          if (errors.token) return htmlResponse(resetInvalidView(RESET_LINK_INVALID), { status: 400 })
          const csrf = anonymousToken(request)
          return htmlResponse(resetFormView({ csrf: csrf.token, token: param(params.token), errors }), {
            status: 400,
            cookies: csrf.cookies,
          })
        }
        const { id, session } = result.value
        s.logger.info('password reset', { account_id: session.accountId })
        return redirectTo('/domains?password_reset=1', [started(id, session.expiresAt)])
      },
      { anonymousCsrf: true },
    )
}
