import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Intake authentication (docs/ingestion.md, docs/api.md "Authentication and limits"): the raw
// message intake takes an API token (the report goes to its account) or the operator's
// INGEST_SECRET with the envelope recipient. It reads the Authorization header with the parser every
// API route uses and counts requests as the API does; the intake secret has its own per-address
// budget under the public limit.

const SECRET = 'intake-secret-for-auth-tests'
const MESSAGE = 'From: a@b.example\r\nTo: x@y.example\r\nSubject: hi\r\n\r\nhello\r\n'

let t: TestApp
let owner: TestAccount

beforeAll(async () => {
  t = await startTestApp(
    {
      RATE_LIMIT_API_PER_MINUTE: '5',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '3',
      INGEST_SECRET: SECRET,
      INGEST_DOMAIN: 'in.dmarcwatch.test',
    },
    { queue: true },
  )
  owner = await t.account()
}, 60_000)
afterAll(() => t.close())

/** A fixed instant 10 s into a minute `minuteOffset` minutes ahead: each test has its own windows. */
function pinClock(minuteOffset: number): void {
  t.clock.now = new Date(Math.floor(Date.now() / 60_000 + minuteOffset) * 60_000 + 10_000)
}

async function intake(authorization: string | null, query = '') {
  const headers = new Headers({ 'content-type': 'message/rfc822' })
  if (authorization !== null) headers.set('authorization', authorization)
  const response = await t.app.handle(
    new Request(`http://localhost/api/v1/ingest/messages${query}`, {
      method: 'POST',
      headers,
      body: MESSAGE,
    }),
  )
  return { status: response.status, headers: response.headers, body: await response.json() }
}

const api = (authorization: string | null) =>
  t.request('GET', '/api/v1/domains', { headers: authorization === null ? {} : { authorization } })

const remaining = (res: { headers: Headers }) => res.headers.get('x-ratelimit-remaining')

test('the intake and the API accept and refuse the same Authorization headers', async () => {
  const token = (await t.account()).token
  const headers = [
    `Bearer ${token}`,
    `bearer ${token}`,
    `BEARER\t${token}`,
    `Bearer   ${token}`,
    `Bearer ${token} `,
    `Bearer ${token} extra`,
    `Bearer\f${token}`,
    `Bearer\v${token}`,
    `Bearer\u00a0${token}`,
    `Basic ${token}`,
    `Bearer`,
    token,
    `Bearer ${token.slice(0, -1)}`,
    `Bearer ${token}x`,
    null,
  ]
  const accepted: (string | null)[] = []
  for (const [i, header] of headers.entries()) {
    // A fresh window per header: the verdicts, not the budget, are compared.
    pinClock(100 + i)
    const [viaApi, viaIntake] = [await api(header), await intake(header)]
    if (viaApi.status === 200) accepted.push(header)
    expect({ header, intake: viaIntake.status }).toEqual({
      header,
      intake: viaApi.status === 200 ? 202 : 401,
    })
    if (viaApi.status !== 200)
      expect([viaApi.body.error, viaIntake.body.error]).toEqual(Array(2).fill('invalid_token'))
  }
  // RFC 6750 §2.1: the scheme in any case, spaces or tabs, then the token alone.
  expect(accepted).toEqual(headers.slice(0, 5))
})

test('an account token’s intake requests spend the token’s budget, shared with the API', async () => {
  pinClock(10)
  const { token } = await t.account()
  const seen: (string | null)[] = []
  for (const send of [() => api(`Bearer ${token}`), () => intake(`Bearer ${token}`)]) {
    for (let i = 0; i < 2; i++) {
      const res = await send()
      expect(res.status).toBeOneOf([200, 202])
      expect(res.headers.get('x-ratelimit-limit')).toBe('5')
      seen.push(remaining(res))
    }
  }
  const last = await intake(`Bearer ${token}`)
  expect(last.status).toBe(202)
  seen.push(remaining(last))
  expect(seen).toEqual(['4', '3', '2', '1', '0'])
  const refused = await intake(`Bearer ${token}`)
  expect(refused.status).toBe(429)
  expect(refused.headers.get('retry-after')).toBe('50')
  expect((await api(`Bearer ${token}`)).status).toBe(429)
})

test('without a usable token the intake counts against the client IP, like the API; 429 before 401', async () => {
  pinClock(20)
  const first = await api(null)
  expect([first.status, remaining(first)]).toEqual([401, '2'])
  const none = await intake(null)
  expect([none.status, remaining(none)]).toEqual([401, '1'])
  expect(none.headers.get('www-authenticate')).toContain('invalid_token')
  const wrongSecret = await intake(`Bearer ${SECRET}x`, '?recipient=r%40in.dmarcwatch.test')
  expect([wrongSecret.status, remaining(wrongSecret)]).toEqual([401, '0'])
  const refused = await intake('Bearer dw_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')
  expect(refused.status).toBe(429)
})

test('the intake secret has its own per-address budget under the public limit', async () => {
  pinClock(30)
  const answers: [number, string | null][] = []
  // Without the recipient: counted, then refused for the missing recipient.
  for (let i = 0; i < 3; i++) {
    const res = await intake(`Bearer ${SECRET}`)
    answers.push([res.status, remaining(res)])
  }
  expect(answers).toEqual([
    [400, '2'],
    [400, '1'],
    [400, '0'],
  ])
  const over = await intake(`Bearer ${SECRET}`, '?recipient=r%40in.dmarcwatch.test')
  expect(over.status).toBe(429)
  expect(over.headers.get('x-ratelimit-limit')).toBe('3')
  // The unauthenticated budget of the same address is untouched.
  const other = await api(null)
  expect([other.status, remaining(other)]).toEqual([401, '2'])
})

test('the intake secret routes by recipient and is compared whole', async () => {
  pinClock(40)
  const address = (await t.request('GET', '/api/v1/ingest/address', { token: owner.token })).body.data.address
  const routed = await intake(`Bearer ${SECRET}`, `?recipient=${encodeURIComponent(address)}`)
  expect(routed.status).toBe(202)
  for (const near of [SECRET.slice(0, -1), `${SECRET}${SECRET}`, SECRET.toUpperCase()]) {
    pinClock(41 + near.length)
    expect((await intake(`Bearer ${near}`, `?recipient=${encodeURIComponent(address)}`)).status).toBe(401)
  }
})

test('authentication comes before the recipient is validated: no token is a 401, whatever the query', async () => {
  pinClock(50)
  // Found by a conformance sweep: a bad recipient without a token answered 400, with no limit
  // headers and uncounted, where every other route answers 401 (docs/api.md, "Input rules").
  const bad = await intake(null, `?recipient=${'x'.repeat(400)}`)
  expect([bad.status, remaining(bad)]).toEqual([401, '2'])
  const control = await intake(null, '?recipient=%00')
  expect([control.status, remaining(control)]).toEqual([401, '1'])
  // Authenticated, the same recipient is the validation error it was.
  const refused = await intake(`Bearer ${SECRET}`, `?recipient=${'x'.repeat(400)}`)
  expect(refused.status).toBe(400)
  expect(Object.keys(refused.body.errors)).toEqual(['recipient'])
})
