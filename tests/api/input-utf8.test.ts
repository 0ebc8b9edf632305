import { afterAll, beforeAll, expect, test } from 'bun:test'
import { listenOnLoopback, startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// docs/api.md, "Input rules": a body whose bytes are not UTF-8 is refused with a 400 on `body`,
// never stored with U+FFFD in place of the bytes (found by a hostile-input sweep: the raw bytes
// ff c0 80 in an organization's name answered 201 with the name "bad\ufffd\ufffd\ufffdx").

let t: TestApp
let owner: TestAccount
let base: string
let stop: () => void

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '100000' })
  owner = await t.account()
  ;({ base, stop } = listenOnLoopback(t.app))
}, 60_000)
afterAll(async () => {
  stop?.()
  await t?.close()
})

const bytes = (...pieces: (string | number[])[]) =>
  new Uint8Array(Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))))

/** Over a real server, so Bun's own handling of the bytes is part of what is tested. */
async function post(
  path: string,
  body: Uint8Array<ArrayBuffer>,
  options: { token?: string | null; type?: string } = {},
) {
  const headers: Record<string, string> = { 'content-type': options.type ?? 'application/json' }
  const token = options.token === undefined ? owner.token : options.token
  if (token !== null) headers.authorization = `Bearer ${token}`
  const response = await fetch(`${base}${path}`, { method: 'POST', headers, body })
  expect(response.headers.get('content-type')).toStartWith('application/json')
  return { status: response.status, body: await response.json() }
}

const organizationNames = async () =>
  (await t.request('GET', '/api/v1/organizations', { token: owner.token })).body.data.map(
    (o: { name: string }) => o.name,
  )

const NOT_UTF8 = 'The request body must be well-formed UTF-8 text.'

test.each([
  ['an invalid byte and an overlong NUL', bytes('{"name":"bad', [0xff, 0xc0, 0x80], 'x"}')],
  ['an encoded surrogate', bytes('{"name":"Q', [0xed, 0xa0, 0x80], 'Q"}')],
  ['an overlong slash', bytes('{"name":"a', [0xc0, 0xaf], 'b"}')],
  ['a sequence cut off at the end', bytes('{"name":"end"}', [0xe2, 0x82])],
])('a JSON body with %s is a 400 on body and nothing is stored', async (_, body) => {
  const answer = await post('/api/v1/organizations', body)
  expect(answer).toEqual({ status: 400, body: { message: NOT_UTF8, errors: { body: [NOT_UTF8] } } })
  expect((await organizationNames()).filter((name: string) => name.includes('\uFFFD'))).toEqual([])
})

test('authentication comes first: without a token the same body is a 401', async () => {
  const answer = await post('/api/v1/organizations', bytes('{"name":"bad', [0xff], '"}'), { token: null })
  expect(answer.status).toBe(401)
})

test('a body that is not JSON is told so, whatever its bytes', async () => {
  const answer = await post('/api/v1/organizations', bytes('name=', [0xff]), { type: 'text/plain' })
  expect(answer.status).toBe(400)
  expect(answer.body.errors.body[0]).toContain('must be JSON')
})

test('well-formed UTF-8 beyond ASCII is stored as sent', async () => {
  const name = 'Café ☕ 𝄞 Zürich'
  const answer = await post('/api/v1/organizations', new TextEncoder().encode(JSON.stringify({ name })))
  expect(answer.status).toBe(201)
  expect(answer.body.data.name).toBe(name)
  expect(await organizationNames()).toContain(name)
})
