import { Elysia } from 'elysia'
import type { TokenStore } from '../domain/accounts/ports.ts'
import { authenticateToken, type Principal } from '../domain/accounts/use-cases.ts'
import { clientNetwork } from '../domain/rate-limits/client-network.ts'
import {
  consume,
  type RateDecision,
  type RateLimitCounter,
  type RateLimitPolicy,
} from '../domain/rate-limits/fixed-window.ts'
import { bearerToken, secretMatcher } from './bearer.ts'
import { assertWellFormed, assertWithinLimit } from './body-limit.ts'
import { clientIp } from './client-ip.ts'
import { FailureError } from './failures.ts'
import { requestFacts } from './request-context.ts'

export interface AuthDeps {
  tokens: Pick<TokenStore, 'findForAuth'>
  counter: RateLimitCounter
  policies: { api: RateLimitPolicy; public: RateLimitPolicy }
  trustedHops: number
  now: () => Date
  /** INGEST_SECRET, for `{ intakeAuth: true }`; null or absent: only account tokens. */
  intakeSecret?: string | null
}

interface HeaderSink {
  headers: Record<string, string | number>
}

/** docs/api.md "Authentication and limits": every API response, 401s and 429s included, carries the X-RateLimit-* trio. */
export function applyDecision(set: HeaderSink, decision: RateDecision): void {
  set.headers['x-ratelimit-limit'] = String(decision.limit)
  set.headers['x-ratelimit-remaining'] = String(decision.remaining)
  set.headers['x-ratelimit-reset'] = String(decision.reset)
  if (!decision.allowed) throw new FailureError({ code: 'rate_limited', retryAfter: decision.retryAfter })
}

type ServerLike = { requestIP(request: Request): { address: string } | null } | null

export function requestIp(deps: Pick<AuthDeps, 'trustedHops'>, request: Request, server: ServerLike): string {
  return clientIp({
    socketIp: server?.requestIP(request)?.address ?? null,
    forwardedFor: request.headers.get('x-forwarded-for'),
    trustedHops: deps.trustedHops,
  })
}

/** What the per-client limits count: the client's address, an IPv6 one by its /56 (client-network.ts). */
function limitSubject(deps: Pick<AuthDeps, 'trustedHops'>, request: Request, server: ServerLike): string {
  return clientNetwork(requestIp(deps, request, server))
}

export const BEARER_SECURITY = [{ bearerAuth: [] }]

/** Who submits to the report intake: an account's token, or the operator's mail server. */
export type Intake = { kind: 'account'; principal: Principal } | { kind: 'operator' }

/**
 * The bearer token of the request as a principal, counted against the token; without a usable
 * token the request is counted against its client IP (public limit) and refused 401
 * `invalid_token`. A 429 comes before the 401.
 */
async function authenticate(
  deps: AuthDeps,
  request: Request,
  server: ServerLike,
  set: HeaderSink,
  now: Date,
) {
  const authenticated = await authenticateToken(deps, {
    token: bearerToken(request.headers.get('authorization')),
    now,
  })
  if (!authenticated.ok) {
    const subject = limitSubject(deps, request, server)
    applyDecision(set, await consume(deps, { policy: deps.policies.public, subject, now }))
    throw new FailureError(authenticated.failure)
  }
  const principal = authenticated.value
  const facts = requestFacts(request)
  if (facts) facts.accountId = principal.accountId
  applyDecision(set, await consume(deps, { policy: deps.policies.api, subject: principal.tokenId, now }))
  return principal
}

/**
 * `{ auth: true }`: bearer-token authentication plus the per-token limit. A request without a usable
 * token is counted against its client IP (public limit) and answered 401 `invalid_token`.
 * `{ intakeAuth: true }`: the same, or the intake secret (`deps.intakeSecret`), which is counted
 * per client address (`intake:<ip>`) under the public limit; resolves `intake` (docs/ingestion.md).
 * `{ publicRateLimit: true }`: the per-IP limit for unauthenticated public endpoints.
 */
export function authPlugin(deps: AuthDeps) {
  // Authentication and limiting run in `transform`, before body and query validation, so an
  // unauthenticated caller learns nothing from validation errors and every answer carries the limit
  // headers. `resolve` then only hands the principal to the handler, typed.
  const principals = new WeakMap<Request, Principal>()
  const intakes = new WeakMap<Request, Intake>()
  const isIntakeSecret = secretMatcher(deps.intakeSecret ?? null)
  return new Elysia({ name: 'auth' }).macro({
    auth: {
      detail: { security: BEARER_SECURITY },
      async transform({ request, server, set, body }) {
        principals.set(request, await authenticate(deps, request, server, set, deps.now()))
        assertWithinLimit(request)
        assertWellFormed(body)
      },
      resolve({ request }): { principal: Principal } {
        const principal = principals.get(request)
        if (principal === undefined) throw new Error('auth transform did not run')
        return { principal }
      },
    },
    // The intake reads no body before its handler (`parse: 'none'`); like `auth`, it authenticates
    // in `transform`, before its ?recipient= query is validated, so a caller without a token gets
    // 401 with the limit headers, never a validation error.
    intakeAuth: {
      detail: { security: BEARER_SECURITY },
      async transform({ request, server, set }) {
        const now = deps.now()
        if (isIntakeSecret(bearerToken(request.headers.get('authorization')))) {
          // The operator's mail server: limited per client address, apart from unauthenticated callers.
          const subject = `intake:${limitSubject(deps, request, server)}`
          applyDecision(set, await consume(deps, { policy: deps.policies.public, subject, now }))
          intakes.set(request, { kind: 'operator' })
          return
        }
        intakes.set(request, {
          kind: 'account',
          principal: await authenticate(deps, request, server, set, now),
        })
      },
      resolve({ request }): { intake: Intake } {
        const intake = intakes.get(request)
        if (intake === undefined) throw new Error('intakeAuth transform did not run')
        return { intake }
      },
    },
    // The API's fallback for unknown routes and wrong methods (src/routes/api-fallback.ts): counted
    // like any API request, so its 404 or 405 carries the limit headers too (docs/api.md,
    // "Authentication and limits"). A request with an Authorization header is authenticated (a bad
    // token is 401), one without is counted against its client address under the public limit.
    anyCaller: {
      async transform({ request, server, set }) {
        const now = deps.now()
        if (request.headers.has('authorization')) await authenticate(deps, request, server, set, now)
        else {
          const subject = limitSubject(deps, request, server)
          applyDecision(set, await consume(deps, { policy: deps.policies.public, subject, now }))
        }
        assertWithinLimit(request)
      },
    },
    publicRateLimit: {
      async transform({ request, server, set, body }) {
        const subject = limitSubject(deps, request, server)
        applyDecision(set, await consume(deps, { policy: deps.policies.public, subject, now: deps.now() }))
        assertWithinLimit(request)
        assertWellFormed(body)
      },
    },
  })
}
