import { Elysia } from 'elysia'
import { sessionCookies, sessionPlugin } from '../../plugins/session.ts'
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
    forbidden: () =>
      messagePage({
        status: 403,
        title: 'Request refused',
        message:
          'This form was sent from another site, or its page is too old. Go back, reload the page and try again.',
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
