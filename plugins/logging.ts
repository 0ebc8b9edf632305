import { Elysia } from 'elysia'
import type { Logger } from '../infrastructure/logging/json-logger.ts'
import { requestFacts } from './request-context.ts'

/** Global: one structured line per request (method, route, status, duration, request id, account). */
export function requestLogging(logger: Logger) {
  return new Elysia({ name: 'request-logging' }).onAfterResponse(
    { as: 'global' },
    ({ request, route, set, path }) => {
      const facts = requestFacts(request)
      logger.info('request', {
        method: request.method,
        route: route || path,
        status: typeof set.status === 'number' ? set.status : 200,
        duration_ms: facts ? Math.round((performance.now() - facts.startedAt) * 100) / 100 : undefined,
        request_id: facts?.id,
        account_id: facts?.accountId,
      })
    },
  )
}
