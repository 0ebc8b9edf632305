import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, formClient, PASSWORD } from './client.ts'

// Login attempts are limited per account email (RATE_LIMIT_LOGIN_PER_MINUTE) and, like every public
// endpoint, per client IP (RATE_LIMIT_PUBLIC_PER_MINUTE, docs/api.md "Authentication and limits").

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({
    RATE_LIMIT_LOGIN_PER_MINUTE: '3',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '8',
    TRUST_PROXY: '1',
  })
}, 60_000)
afterAll(() => t.close())

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`

/** A login attempt from `ip` (TRUST_PROXY=1: the client is the X-Forwarded-For entry). */
async function attempt(email: string, password: string, ip: string) {
  const client = formClient(t)
  const page = await client.get('/login')
  return client.post(
    '/login',
    { _csrf: csrfOf(page.html), email, password },
    { headers: { 'x-forwarded-for': ip } },
  )
}

test('the fourth attempt on one email within a minute is refused with 429 and Retry-After, from any IP', async () => {
  // Pin the clock early in a minute so the window does not roll over mid-test.
  const now = new Date()
  now.setUTCSeconds(5, 0)
  t.clock.now = now
  const email = unique('target')
  const owner = formClient(t)
  const signup = await owner.get('/signup')
  await owner.post(
    '/signup',
    { _csrf: csrfOf(signup.html), email, password: PASSWORD },
    { headers: { 'x-forwarded-for': '10.0.0.1' } },
  )

  for (let i = 0; i < 3; i++)
    expect((await attempt(email, 'wrong password!', `10.1.0.${i}`)).status).toBe(400)
  const refused = await attempt(email, PASSWORD, '10.1.0.99')
  expect(refused.status).toBe(429)
  expect(refused.headers.get('retry-after')).toBe('55')
  expect(refused.html).toContain('Too many attempts')
  // Unknown emails are limited the same way (no enumeration by limits).
  const ghost = unique('ghost')
  for (let i = 0; i < 3; i++) expect((await attempt(ghost, 'whatever pass', `10.2.0.${i}`)).status).toBe(400)
  expect((await attempt(ghost, 'whatever pass', '10.2.0.9')).status).toBe(429)
  // Another email is not affected; the next minute lets the owner in.
  expect((await attempt(unique('other'), 'whatever pass', '10.3.0.1')).status).toBe(400)
  t.clock.now = new Date(now.getTime() + 60_000)
  expect((await attempt(email, PASSWORD, '10.1.0.99')).status).toBe(303)
  t.clock.now = new Date()
})

test('one IP is limited across emails, and across login, sign-up and password reset', async () => {
  const now = new Date()
  now.setUTCSeconds(5, 0)
  t.clock.now = new Date(now.getTime() + 5 * 60_000)
  const ip = '192.0.2.77'
  for (let i = 0; i < 6; i++) expect((await attempt(unique('spray'), 'whatever pass', ip)).status).toBe(400)
  const client = formClient(t)
  const page = await client.get('/password-reset')
  const reset = await client.post(
    '/password-reset',
    { _csrf: csrfOf(page.html), email: unique('r') },
    { headers: { 'x-forwarded-for': ip } },
  )
  expect(reset.status).toBe(200)
  const signup = await client.post(
    '/signup',
    { _csrf: csrfOf(page.html), email: unique('s'), password: PASSWORD },
    { headers: { 'x-forwarded-for': ip } },
  )
  expect(signup.status).toBe(303)
  const refused = await attempt(unique('spray'), 'whatever pass', ip)
  expect(refused.status).toBe(429)
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  // Another IP is not affected.
  expect((await attempt(unique('spray'), 'whatever pass', '192.0.2.78')).status).toBe(400)
  t.clock.now = new Date()
})
