import { Elysia } from 'elysia'
import { errorFields, type Logger } from '../domain/shared/logger.ts'
import { FailureError, toHttp } from './failures.ts'
import { requestFacts } from './request-context.ts'
import { validationBody } from './validation-messages.ts'

export type AllowedMethods = (path: string) => string[]

const INTERNAL_MESSAGE =
  'Something went wrong on our side. Retry with backoff; quote the request id if it persists.'

const UNAVAILABLE_MESSAGE = 'The service cannot reach its database right now. Retry in a few seconds.'
const UNAVAILABLE_RETRY_SECONDS = 5

/** The 500 body: the request id and nothing else about the failure (docs/api.md, "Errors"). */
export function internalErrorBody(requestId: string | undefined) {
  return { error: 'internal_error', message: INTERNAL_MESSAGE, request_id: requestId }
}

/**
 * Global error mapping (docs/api.md "Errors"): expected failures by their code, validation and parse errors
 * in the validation format (docs/api.md), unknown routes as JSON 404 (405 with `Allow` when the path
 * exists under another method; a browser asking for a missing page gets the dashboard's HTML 404),
 * and anything unexpected as a 500 that names only the request id. The mapping itself can never
 * throw: an error escaping it would reach Bun, whose development error page shows the stack.
 */
export function errorMapping(deps: {
  logger: Logger
  allowedMethods: AllowedMethods
  /** The dashboard's 404 page, for a browser asking for a page that does not exist (not /api/). */
  notFoundPage?: () => Response
  /** The dashboard's 400 page, for a browser whose form or address broke an input rule (not /api/). */
  badRequestPage?: (message: string) => Response
  /**
   * Whether an unexpected error means a dependency (the database) cannot serve now: answered 503
   * `service_unavailable` with Retry-After instead of a 500.
   */
  isUnavailable?: (error: unknown) => boolean
}) {
  return new Elysia({ name: 'error-mapping' })
    .error({ FAILURE: FailureError })
    .onError({ as: 'global' }, (context) => {
      try {
        return mapError(deps, context as unknown as ErrorContext)
      } catch (mappingError) {
        const requestId = requestFacts(context.request)?.id
        deps.logger.error('error mapping failed', { request_id: requestId, ...errorFields(mappingError) })
        context.set.status = 500
        context.set.headers['content-type'] = 'application/json; charset=utf-8'
        return internalErrorBody(requestId)
      }
    })
}

/** What the cases below read of Elysia's error classes (FailureError, ValidationError). */
interface ErrorLike {
  failure: FailureError['failure']
  type?: string
  all?: unknown
  value?: unknown
}

interface ErrorContext {
  code: string
  error: ErrorLike
  set: { status?: number | string; headers: Record<string, string | number> }
  request: Request
  path: string
  body?: unknown
  params?: unknown
}

function mapError(
  deps: Parameters<typeof errorMapping>[0],
  { code, error, set, request, path, body, params }: ErrorContext,
) {
  const apply = (status: number, body: Record<string, unknown>, headers?: Record<string, string>) => {
    set.status = status
    for (const [name, value] of Object.entries(headers ?? {})) set.headers[name] = value
    set.headers['content-type'] = 'application/json; charset=utf-8'
    return body
  }
  // A page answers with its own Response; the log and the metrics read the status from `set`
  // (an error's response value is the error), where it would still say 500 or 200.
  const sent = (response: Response) => {
    set.status = response.status
    return response
  }
  const page = (status: number, body: Record<string, unknown>) => {
    const browser = !path.startsWith('/api/') && /\btext\/html\b/.test(request.headers.get('accept') ?? '')
    if (status === 400 && browser && deps.badRequestPage)
      return sent(deps.badRequestPage(String(body.message)))
    return apply(status, body)
  }
  switch (code) {
    case 'FAILURE': {
      const mapped = toHttp(error.failure)
      if (mapped.status === 400 && mapped.headers === undefined) return page(400, mapped.body)
      return apply(mapped.status, mapped.body, mapped.headers)
    }
    case 'VALIDATION': {
      // A response that fails its own schema is our bug, not the caller's: a 500, logged.
      if (error.type === 'response') break
      // Elysia reports a coerced value that fails its range as type `property` with only the
      // value; validationBody finds the field by that value in the query, body and path.
      if (error.type === 'property') {
        const query = Object.fromEntries(new URL(request.url).searchParams)
        return page(400, validationBody(error.all as never, 'query', query, body, params))
      }
      return page(400, validationBody(error.all as never, error.type ?? 'request', error.value))
    }
    case 'PARSE':
      return page(400, {
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
      const wantsPage = request.method === 'GET' && !path.startsWith('/api/')
      if (wantsPage && deps.notFoundPage && /\btext\/html\b/.test(request.headers.get('accept') ?? ''))
        return sent(deps.notFoundPage())
      return apply(404, { error: 'not_found', message: 'No such route. See /openapi/json for the API.' })
    }
    case 'INVALID_COOKIE_SIGNATURE':
      return page(400, { message: 'A cookie is invalid.', errors: { cookie: ['A cookie is invalid.'] } })
  }
  // UNKNOWN, INTERNAL_SERVER_ERROR and anything else: logged with its stack, never sent.
  const requestId = requestFacts(request)?.id
  if (deps.isUnavailable?.(error)) {
    deps.logger.warn('dependency unavailable', { request_id: requestId, path, ...errorFields(error) })
    return apply(
      503,
      { error: 'service_unavailable', message: UNAVAILABLE_MESSAGE, request_id: requestId },
      { 'retry-after': String(UNAVAILABLE_RETRY_SECONDS) },
    )
  }
  deps.logger.error('unexpected error', { request_id: requestId, path, ...errorFields(error) })
  return apply(500, internalErrorBody(requestId))
}

/**
 * Bun.serve options for the app's server: never Bun's development error page (it shows the stack,
 * source lines and working directory), and a JSON 500 for anything that escapes Elysia.
 */
export function serverErrorOptions(logger: Logger) {
  return {
    development: false,
    error(error: Error) {
      logger.error('unhandled server error', errorFields(error))
      return Response.json(internalErrorBody(undefined), {
        status: 500,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      })
    },
  }
}
