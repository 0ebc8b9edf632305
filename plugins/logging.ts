import { Elysia, StatusMap } from 'elysia'
import type { Logger } from '../domain/shared/logger.ts'
import { requestFacts } from './request-context.ts'

/** `set.status` may be a name ('Not Found') when a handler used one. */
function statusCode(status: unknown): number {
  if (typeof status === 'number') return status
  if (typeof status === 'string') return (StatusMap as Record<string, number>)[status] ?? 200
  return 200
}

/** Where the request metrics go: the process's instruments (src/compose.ts hands it infrastructure/metrics/instruments.ts). */
export interface RequestMetrics {
  /** Once per answered request; `route` is the route pattern, never the path. */
  recordRequest(method: string, route: string, status: number, seconds: number): void
}

/**
 * Global: one structured line per request (method, route, status, duration, request id, account),
 * and the same facts into the request metrics. The plugin is handed both, so it knows only their
 * interfaces (tests/architecture.test.ts keeps plugins off infrastructure/).
 */
export function requestLogging(logger: Logger, metrics: RequestMetrics) {
  return new Elysia({ name: 'request-logging' }).onAfterResponse(
    { as: 'global' },
    ({ request, route, set, path, responseValue }) => {
      const facts = requestFacts(request)
      // A handler that returns its own Response (the dashboard's pages and redirects) leaves
      // set.status alone: its status is the Response's (they were all logged as 200).
      const status = responseValue instanceof Response ? responseValue.status : statusCode(set.status)
      const ms = facts ? performance.now() - facts.startedAt : undefined
      // The metric's route label is the pattern, and one fixed value for paths no route matched:
      // raw paths would make a series per URL anyone cares to send (unbounded cardinality).
      metrics.recordRequest(request.method, route || 'unmatched', status, (ms ?? 0) / 1000)
      logger.info('request', {
        method: request.method,
        route: route || path,
        status,
        duration_ms: ms === undefined ? undefined : Math.round(ms * 100) / 100,
        request_id: facts?.id,
        account_id: facts?.accountId,
      })
    },
  )
}
