import { Elysia } from 'elysia'
import { CONTENT_TYPE } from '../../infrastructure/metrics/registry.ts'
import { type MetricsSources, scrapeMetrics, startLagSampler } from '../../infrastructure/metrics/scrape.ts'
import { bearerToken, secretMatcher } from '../../plugins/bearer.ts'
import { BAD_HOST_MESSAGE } from '../../plugins/request-id.ts'

// GET /metrics: Prometheus text for the scraper, behind METRICS_TOKEN (Bearer). Without a token
// configured the route does not exist (404 like any unknown path): metrics are off by default, and
// an operator who forgets the token does not publish queue names and traffic to the world.
// A ROLE=worker process answers the same on METRICS_PORT (src/main.ts, workerEndpoints below).

export interface MetricsDeps extends MetricsSources {
  /** METRICS_TOKEN; null: no /metrics. */
  token: string | null
}

/** Checks the bearer token against METRICS_TOKEN in constant time (plugins/bearer.ts). */
export function tokenChecker(token: string): (authorization: string | null) => boolean {
  const matches = secretMatcher(token)
  return (authorization) => matches(bearerToken(authorization))
}

const UNAUTHORIZED = JSON.stringify({
  error: 'invalid_token',
  message: 'The metrics token is missing or wrong: send METRICS_TOKEN as a Bearer token.',
})

/** The framework-free handler, shared by the API route and the worker's metrics listener. */
export function metricsEndpoint(deps: MetricsSources & { token: string }) {
  const authorized = tokenChecker(deps.token)
  startLagSampler()
  return async (request: Request): Promise<Response> => {
    if (!authorized(request.headers.get('authorization'))) {
      return new Response(UNAUTHORIZED, {
        status: 401,
        headers: {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer realm="dmarcwatch metrics", error="invalid_token"',
        },
      })
    }
    return new Response(await scrapeMetrics(deps), {
      headers: { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' },
    })
  }
}

export function metricsRoutes(deps: MetricsDeps) {
  const plugin = new Elysia({ name: 'routes:metrics' })
  const token = deps.token
  if (token === null) return plugin
  const endpoint = metricsEndpoint({ ...deps, token })
  return plugin.get('/metrics', ({ request }) => endpoint(request), {
    // Operational, not part of the API: kept out of the OpenAPI document.
    detail: { hide: true },
  })
}

/**
 * What a ROLE=worker process serves on METRICS_PORT: /metrics (as above, 404 without a token) and
 * the documented /healthz and /readyz, so a supervisor can probe a process that has no API.
 */
export function workerEndpoints(deps: MetricsDeps & { ready: () => Promise<boolean> }) {
  const token = deps.token
  const metrics = token === null ? null : metricsEndpoint({ ...deps, token })
  const json = (status: number, body: unknown) => Response.json(body, { status })
  return async (request: Request): Promise<Response> => {
    // A missing or malformed Host header leaves the request without a URL (RFC 9112 §3.2).
    if (!URL.canParse(request.url))
      return json(400, { error: 'validation_failed', message: BAD_HOST_MESSAGE })
    const path = new URL(request.url).pathname
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const body = {
        error: 'method_not_allowed',
        message: `${request.method} is not allowed here. Allowed: GET, HEAD.`,
      }
      return Response.json(body, { status: 405, headers: { allow: 'GET, HEAD' } })
    }
    if (path === '/metrics' && metrics !== null) return metrics(request)
    if (path === '/healthz') return json(200, { status: 'ok' })
    if (path === '/readyz') {
      const ready = await deps.ready().catch(() => false)
      return ready ? json(200, { status: 'ready' }) : json(503, { status: 'not_ready' })
    }
    return json(404, {
      error: 'not_found',
      message: 'No such route. This port serves /metrics, /healthz and /readyz.',
    })
  }
}
