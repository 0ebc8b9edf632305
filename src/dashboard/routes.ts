import { Elysia } from 'elysia'
import { requestOrigin, sessionCookies, sessionPlugin } from '../../plugins/session.ts'
import { alertPages } from './alert-pages.ts'
import { assetResponse } from './assets.ts'
import { authPages } from './auth-pages.ts'
import { domainPages } from './domain-pages.ts'
import { messagePage } from './layout.ts'
import { loginLinkPages } from './login-link-pages.ts'
import { notificationPages } from './notification-pages.ts'
import { oauthPages } from './oauth-pages.ts'
import { organizationPages } from './organization-pages.ts'
import { providerPages } from './provider-pages.ts'
import { reportPages } from './report-pages.ts'
import { type DashboardDeps, dashboardServices } from './services.ts'
import { settingsPages } from './settings-pages.ts'

// The server-rendered dashboard at the origin's root (issue #8, docs/dashboard.md).

export type { DashboardDeps } from './services.ts'

export function dashboardRoutes(deps: DashboardDeps) {
  const s = dashboardServices(deps)
  const expected = new URL(deps.config.publicUrl).origin
  /**
   * Why a form was refused. A page opened at another address of this service than PUBLIC_URL
   * (127.0.0.1 for localhost, another port) sends that origin, and reloading never helps: say so.
   */
  const refusedFormMessage = (request: Request) => {
    const sent = requestOrigin(request)
    if (
      sent !== null &&
      URL.canParse(sent) &&
      sent !== expected &&
      new URL(request.url).host === new URL(sent).host
    ) {
      deps.logger.info('form refused: opened at an address other than PUBLIC_URL', {
        origin: sent,
        public_url: expected,
      })
      return `This page was opened at ${sent}, but this service’s address (PUBLIC_URL) is ${expected}, and its forms are accepted only from there. Open ${expected} instead, or set PUBLIC_URL to the address you use.`
    }
    return 'This form was sent from another site, or its page is too old. Go back, reload the page and try again.'
  }
  const cookies = sessionCookies(deps.config.publicUrl)
  if (cookies.secure && deps.config.publicUrl.startsWith('http:')) {
    deps.logger.warn(
      'PUBLIC_URL is plain http off localhost: browsers drop the Secure session cookie, so dashboard logins will not stick; serve it over https',
    )
  }
  const sessions = sessionPlugin({
    sessions: s.sessions,
    now: deps.now,
    publicUrl: deps.config.publicUrl,
    forbidden: (request) =>
      messagePage({
        status: 403,
        title: 'Request refused',
        message: refusedFormMessage(request),
        viewer: null,
      }),
  })
  return new Elysia({ name: 'dashboard', detail: { hide: true } })
    .get('/assets/:file', ({ params, request }) =>
      assetResponse(params.file, request.headers.get('if-none-match')),
    )
    .use(authPages(s, sessions, cookies))
    .use(loginLinkPages(s, sessions, cookies))
    .use(domainPages(s, sessions))
    .use(reportPages(s, sessions))
    .use(alertPages(s, sessions))
    .use(settingsPages(s, sessions))
    .use(notificationPages(s, sessions))
    .use(organizationPages(s, sessions))
    .use(providerPages(s, sessions))
    .use(oauthPages(s))
}
