import { Elysia } from 'elysia'
import { rememberFacts } from './request-context.ts'

// An id a client or proxy sent is kept when it is short and plain, so one id follows a request
// through every hop; anything else is replaced (it is echoed in headers and logs).
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{8,128}$/

/** Global: `X-Request-Id` on every response, errors and 404s included (docs/api.md "Errors"). */
export const requestId = new Elysia({ name: 'request-id' })
  .onRequest(({ request, set }) => {
    const incoming = request.headers.get('x-request-id')
    const id = incoming !== null && ACCEPTABLE_ID.test(incoming) ? incoming : crypto.randomUUID()
    rememberFacts(request, { id, startedAt: performance.now() })
    set.headers['x-request-id'] = id
  })
  .as('global')
