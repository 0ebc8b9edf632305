import { Elysia } from 'elysia'
import { FailureError } from './failures.ts'
import { rememberFacts } from './request-context.ts'

// An id a client or proxy sent is kept when it is short and plain, so one id follows a request
// through every hop; anything else is replaced (it is echoed in headers and logs).
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{8,128}$/

export const BAD_HOST_MESSAGE = 'The Host header is missing or names no valid host.'

const badHost = () =>
  new FailureError({
    code: 'validation_failed',
    message: BAD_HOST_MESSAGE,
    errors: { host: [BAD_HOST_MESSAGE] },
  })

/** Global: `X-Request-Id` on every response, errors and 404s included (docs/api.md "Errors"). */
export const requestId = new Elysia({ name: 'request-id' })
  .onRequest(({ request, set }) => {
    const incoming = request.headers.get('x-request-id')
    const id = incoming !== null && ACCEPTABLE_ID.test(incoming) ? incoming : crypto.randomUUID()
    rememberFacts(request, { id, startedAt: performance.now() })
    set.headers['x-request-id'] = id
    // A malformed Host header (`Host: a b`; RFC 9112 §3.2 makes it a 400) or none at all (HTTP/1.0
    // allows that) leaves the request without a URL, and every later `new URL(request.url)` threw:
    // a 500 on every route.
    if (!URL.canParse(request.url)) throw badHost()
  })
  .as('global')
