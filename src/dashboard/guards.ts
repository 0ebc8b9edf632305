import type { ClientFacts } from '../../domain/accounts/password-login.ts'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { clientNetwork } from '../../domain/rate-limits/client-network.ts'
import { consume, type RateLimitPolicy } from '../../domain/rate-limits/fixed-window.ts'
import { requestIp } from '../../plugins/auth.ts'
import { requestFacts } from '../../plugins/request-context.ts'
import { messagePage, type Viewer } from './layout.ts'
import type { DashboardServices } from './services.ts'

// Shared by the page modules: limits, client facts, the signed-in viewer.

export type ServerLike = Parameters<typeof requestIp>[2]

export function clientFacts(
  s: Pick<DashboardServices, 'config'>,
  request: Request,
  server: ServerLike,
): ClientFacts & { ip: string; network: string } {
  const ip = requestIp({ trustedHops: s.config.trustProxy }, request, server)
  // The address is what a session records; the limits count its network (client-network.ts).
  return { userAgent: request.headers.get('user-agent'), ip, network: clientNetwork(ip) }
}

/** docs/api.md "Authentication and limits": login, sign-up and password reset are public endpoints, limited per client IP. */
export function publicPolicy(s: Pick<DashboardServices, 'config'>): RateLimitPolicy {
  return { scope: 'public', limit: s.config.rateLimits.publicPerMinute, windowSeconds: 60 }
}

/** Login attempts per account email, whether or not the email has an account (no enumeration). */
export function loginPolicy(s: Pick<DashboardServices, 'config'>): RateLimitPolicy {
  return { scope: 'login-email', limit: s.config.rateLimits.loginPerMinute, windowSeconds: 60 }
}

/** Reset mails per address: the form must not be a way to flood someone's inbox. */
export const RESET_MAIL_POLICY: RateLimitPolicy = { scope: 'reset-mail', limit: 5, windowSeconds: 3600 }

/**
 * Counts the request against each limit in turn and answers the first refusal as a 429 page with
 * Retry-After; null when every limit allows it.
 */
export async function limited(
  s: Pick<DashboardServices, 'counter' | 'now'>,
  checks: { policy: RateLimitPolicy; subject: string }[],
  viewer: Viewer | null = null,
): Promise<Response | null> {
  const now = s.now()
  for (const check of checks) {
    const decision = await consume(s, { ...check, now })
    if (!decision.allowed) {
      return messagePage({
        status: 429,
        title: 'Too many attempts',
        message: `Too many attempts. Wait ${decision.retryAfter} seconds and try again.`,
        viewer,
        headers: { 'retry-after': String(decision.retryAfter) },
      })
    }
  }
  return null
}

export function viewerOf(session: ActiveSession): Viewer {
  return { email: session.email, csrfToken: session.csrfToken }
}

/** A domain that is not in the session's account (or nowhere): the same 404 page everywhere. */
export function domainNotFound(session: ActiveSession): Response {
  return messagePage({
    status: 404,
    title: 'Domain not found',
    message: 'This domain is not in your account.',
    viewer: viewerOf(session),
  })
}

/** The request log names the account, as it does for API requests. */
export function noteAccount(request: Request, session: ActiveSession): void {
  const facts = requestFacts(request)
  if (facts) facts.accountId = session.accountId
}

/** A path parameter; Elysia hands over null for one that is not valid percent-encoded UTF-8. */
export function param(value: string | null | undefined): string {
  return typeof value === 'string' ? value : ''
}
