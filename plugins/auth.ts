import { Elysia } from 'elysia'
import type { TokenStore } from '../domain/accounts/ports.ts'
import { authenticateToken, type Principal } from '../domain/accounts/use-cases.ts'
import {
  consume,
  type RateDecision,
  type RateLimitCounter,
  type RateLimitPolicy,
} from '../domain/rate-limits/fixed-window.ts'
import { assertWellFormed } from './body-limit.ts'
import { clientIp } from './client-ip.ts'
import { FailureError } from './failures.ts'
import { requestFacts } from './request-context.ts'

export interface AuthDeps {
  tokens: Pick<TokenStore, 'findForAuth'>
  counter: RateLimitCounter
  policies: { api: RateLimitPolicy; public: RateLimitPolicy }
  trustedHops: number
  now: () => Date
}

interface HeaderSink {
  headers: Record<string, string | number>
}

/** Contract §3: every API response, 401s and 429s included, carries the X-RateLimit-* trio. */
export function applyDecision(set: HeaderSink, decision: RateDecision): void {
  set.headers['x-ratelimit-limit'] = String(decision.limit)
  set.headers['x-ratelimit-remaining'] = String(decision.remaining)
  set.headers['x-ratelimit-reset'] = String(decision.reset)
  if (!decision.allowed) throw new FailureError({ code: 'rate_limited', retryAfter: decision.retryAfter })
}

function bearerToken(header: string | null): string | null {
  if (header === null) return null
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match ? match[1]! : null
}

type ServerLike = { requestIP(request: Request): { address: string } | null } | null

export function requestIp(deps: Pick<AuthDeps, 'trustedHops'>, request: Request, server: ServerLike): string {
  return clientIp({
    socketIp: server?.requestIP(request)?.address ?? null,
    forwardedFor: request.headers.get('x-forwarded-for'),
    trustedHops: deps.trustedHops,
  })
}

export const BEARER_SECURITY = [{ bearerAuth: [] }]

/**
 * `{ auth: true }`: bearer-token authentication plus the per-token limit. A request without a usable
 * token is counted against its client IP (public limit) and answered 401 `invalid_token`.
 * `{ publicRateLimit: true }`: the per-IP limit for unauthenticated public endpoints.
 */
export function authPlugin(deps: AuthDeps) {
  // Authentication and limiting run in `transform`, before body and query validation, so an
  // unauthenticated caller learns nothing from validation errors and every answer carries the limit
  // headers. `resolve` then only hands the principal to the handler, typed.
  const principals = new WeakMap<Request, Principal>()
  return new Elysia({ name: 'auth' }).macro({
    auth: {
      detail: { security: BEARER_SECURITY },
      async transform({ request, server, set, body }) {
        const now = deps.now()
        const authenticated = await authenticateToken(deps, {
          token: bearerToken(request.headers.get('authorization')),
          now,
        })
        if (!authenticated.ok) {
          const subject = requestIp(deps, request, server)
          applyDecision(set, await consume(deps, { policy: deps.policies.public, subject, now }))
          throw new FailureError(authenticated.failure)
        }
        const principal = authenticated.value
        const facts = requestFacts(request)
        if (facts) facts.accountId = principal.accountId
        applyDecision(
          set,
          await consume(deps, { policy: deps.policies.api, subject: principal.tokenId, now }),
        )
        principals.set(request, principal)
        assertWellFormed(body)
      },
      resolve({ request }): { principal: Principal } {
        const principal = principals.get(request)
        if (principal === undefined) throw new Error('auth transform did not run')
        return { principal }
      },
    },
    publicRateLimit: {
      async transform({ request, server, set, body }) {
        const subject = requestIp(deps, request, server)
        applyDecision(set, await consume(deps, { policy: deps.policies.public, subject, now: deps.now() }))
        assertWellFormed(body)
      },
    },
  })
}
