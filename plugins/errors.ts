import { Elysia } from 'elysia'
import { errorFields, type Logger } from '../domain/shared/logger.ts'
import { FailureError, toHttp } from './failures.ts'
import { requestFacts } from './request-context.ts'
import { validationBody } from './validation-messages.ts'

export type AllowedMethods = (path: string) => string[]

/**
 * Global error mapping (contract §2): expected failures by their code, validation and parse errors
 * in the contract's validation format, unknown routes as JSON 404 (405 with `Allow` when the path
 * exists under another method; a browser asking for a missing page gets the dashboard's HTML 404),
 * and anything unexpected as a 500 that names only the request id.
 */
export function errorMapping(deps: {
  logger: Logger
  allowedMethods: AllowedMethods
  /** The dashboard's 404 page, for a browser asking for a page that does not exist (not /api/). */
  notFoundPage?: () => Response
}) {
  return new Elysia({ name: 'error-mapping' })
    .error({ FAILURE: FailureError })
    .onError({ as: 'global' }, ({ code, error, set, request, path }) => {
      const apply = (status: number, body: Record<string, unknown>, headers?: Record<string, string>) => {
        set.status = status
        for (const [name, value] of Object.entries(headers ?? {})) set.headers[name] = value
        set.headers['content-type'] = 'application/json; charset=utf-8'
        return body
      }
      switch (code) {
        case 'FAILURE': {
          const mapped = toHttp(error.failure)
          return apply(mapped.status, mapped.body, mapped.headers)
        }
        case 'VALIDATION': {
          // A response that fails its own schema is our bug, not the caller's: a 500, logged.
          if (error.type === 'response') break
          // Elysia reports a coerced query value that fails its range as type `property` with only the
          // value; the query string lets validationBody find the field by that value.
          if (error.type === 'property') {
            const query = Object.fromEntries(new URL(request.url).searchParams)
            return apply(400, validationBody(error.all as never, 'query', query))
          }
          return apply(400, validationBody(error.all as never, error.type, error.value))
        }
        case 'PARSE':
          return apply(400, {
            message: 'The request body is not valid JSON.',
            errors: { body: ['The request body is not valid JSON.'] },
          })
        case 'NOT_FOUND': {
          const allowed = deps.allowedMethods(path)
          if (allowed.length > 0 && !allowed.includes(request.method)) {
            return apply(
              405,
              {
                error: 'method_not_allowed',
                message: `${request.method} is not allowed here. Allowed: ${allowed.join(', ')}.`,
              },
              { allow: allowed.join(', ') },
            )
          }
          const page = request.method === 'GET' && !path.startsWith('/api/')
          if (page && deps.notFoundPage && /\btext\/html\b/.test(request.headers.get('accept') ?? ''))
            return deps.notFoundPage()
          return apply(404, { error: 'not_found', message: 'No such route. See /openapi/json for the API.' })
        }
        case 'INVALID_COOKIE_SIGNATURE':
          return apply(400, { message: 'A cookie is invalid.', errors: { cookie: ['A cookie is invalid.'] } })
      }
      const requestId = requestFacts(request)?.id
      deps.logger.error('unexpected error', { request_id: requestId, path, ...errorFields(error) })
      return apply(500, {
        error: 'internal_error',
        message: 'Something went wrong on our side. Retry with backoff; quote the request id if it persists.',
        request_id: requestId,
      })
    })
}
