import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { CSP } from '../../src/dashboard/layout.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { cookieAttributes, csrfOf, formClient, PASSWORD } from './client.ts'

// Sign-up, login and logout through the pages, as a browser posts them (docs/dashboard.md).

let t: TestApp
beforeAll(async () => {
  // Login limits have their own test (rate-limits.test.ts); here one email logs in many times.
  t = await startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '1000' })
}, 60_000)
afterAll(() => t.close())

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`

describe('sign-up', () => {
  test('creates the account, logs in with a session cookie and lands on /domains', async () => {
    const client = formClient(t)
    const email = unique('new')
    const answer = await client.signUp(email)
    expect(answer.status).toBe(303)
    expect(answer.location).toBe('/domains')
    const cookie = cookieAttributes(answer.setCookies, 'dw_session')!
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(cookie).toMatchObject({ path: '/', httponly: '', samesite: 'Lax', 'max-age': String(30 * 86_400) })
    // Plain-http localhost development: not Secure (the browser would drop it).
    expect(cookie.secure).toBeUndefined()
    const domains = await client.get('/domains')
    expect(domains.status).toBe(200)
    expect(domains.html).toContain(email)
    // Only a hash of the id is stored.
    const rows = await t.db.database.db.execute(sql`select * from sessions`)
    expect(JSON.stringify(rows)).not.toContain(cookie.value)
  })

  test('refuses a short password and a taken email, keeping what was typed', async () => {
    const client = formClient(t)
    const email = unique('short')
    const short = await client.submit('/signup', { email, password: 'short' })
    expect(short.status).toBe(400)
    expect(short.html).toContain('at least 10 characters')
    expect(short.html).toContain(`value="${email}"`)
    expect(short.html).toContain('aria-invalid="true"')
    expect((await client.signUp(email)).status).toBe(303)
    const again = await formClient(t).signUp(email.toUpperCase())
    expect(again.status).toBe(400)
    expect(again.html).toContain('already exists')
  })

  test('sign-up carries a local `next` (an invitation link) through, and ignores any other', async () => {
    const client = formClient(t)
    const page = await client.get('/signup?next=%2Finvitations%2Fabc')
    expect(page.html).toContain('name="next" value="/invitations/abc"')
    const answer = await client.submit(
      '/signup?next=%2Finvitations%2Fabc',
      { email: unique('next'), password: PASSWORD, next: '/invitations/abc' },
      '/signup',
    )
    expect(answer.location).toBe('/invitations/abc')
    const outside = await formClient(t).submit('/signup', {
      email: unique('outside'),
      password: PASSWORD,
      next: '//evil.example/',
    })
    expect(outside.location).toBe('/domains')
  })

  test('pages carry the CSP and protective headers and load nothing external', async () => {
    const page = await formClient(t).get('/signup')
    expect(page.headers.get('content-security-policy')).toBe(CSP)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('referrer-policy')).toBe('same-origin')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.html).toStartWith('<!doctype html>')
    expect(page.html).toContain('<html lang="en"')
    expect(page.html).not.toMatch(/(src|href|action)="(https?:)?\/\//)
    expect(page.html).toContain('<label for="email">')
  })
})

describe('login', () => {
  let email: string
  beforeAll(async () => {
    email = unique('login')
    await formClient(t).signUp(email)
  })

  test('logs in and out; after logout the session is gone', async () => {
    const client = formClient(t)
    const login = await client.logIn(email.toUpperCase())
    expect(login.status).toBe(303)
    expect(login.location).toBe('/domains')
    const session = client.jar.get('dw_session')!
    expect((await client.get('/domains')).status).toBe(200)
    const page = await client.get('/domains')
    const logout = await client.post('/logout', { _csrf: csrfOf(page.html) })
    expect(logout.status).toBe(303)
    expect(logout.location).toBe('/login?logged_out=1')
    expect(cookieAttributes(logout.setCookies, 'dw_session')?.['max-age']).toBe('0')
    expect((await client.get('/login?logged_out=1')).html).toContain('You are logged out.')
    // The old cookie, replayed, opens nothing.
    const replay = await t.app.handle(
      new Request(`${t.config.publicUrl}/domains`, { headers: { cookie: `dw_session=${session}` } }),
    )
    expect(replay.status).toBe(303)
    expect(replay.headers.get('location')).toBe('/login')
  })

  test('a wrong password and an unknown email get the same answer', async () => {
    const client = formClient(t)
    const wrong = await client.logIn(email, 'not the password at all')
    const unknown = await client.logIn(unique('nobody'), 'not the password at all')
    expect(wrong.status).toBe(400)
    expect(unknown.status).toBe(400)
    const strip = (html: string) => html.replace(/value="[^"]*@example\.com"/, '')
    expect(strip(wrong.html)).toBe(strip(unknown.html))
    expect(wrong.html).toContain('Wrong email or password.')
    expect(client.jar.has('dw_session')).toBe(false)
  })

  test('goes back to the page asked for, but never off-site', async () => {
    const client = formClient(t)
    const asked = await client.get('/settings/api?tab=1')
    expect(asked.status).toBe(303)
    expect(asked.location).toBe('/login?next=%2Fsettings%2Fapi%3Ftab%3D1')
    const form = await client.get(asked.location!)
    expect(form.html).toContain('name="next" value="/settings/api?tab=1"')
    const back = await client.post('/login', {
      _csrf: csrfOf(form.html),
      email,
      password: PASSWORD,
      next: '/settings/api?tab=1',
    })
    expect(back.location).toBe('/settings/api?tab=1')

    for (const next of [
      '//evil.example/x',
      'https://evil.example/',
      '/\\evil.example',
      '/\t/evil.example',
      'javascript:alert(1)',
      ' /domains',
    ]) {
      const other = formClient(t)
      const page = await other.get(`/login?next=${encodeURIComponent(next)}`)
      const answer = await other.post('/login', { _csrf: csrfOf(page.html), email, password: PASSWORD, next })
      expect(answer.status).toBe(303)
      expect(answer.location).toBe('/domains')
    }
    // Already logged in: /login goes to next (checked the same way).
    expect((await client.get('/login?next=//evil.example')).location).toBe('/domains')
    expect((await client.get('/login?next=/settings/account')).location).toBe('/settings/account')
  })

  test('/ goes to /domains when logged in, else to /login; logged-out pages redirect with next', async () => {
    const client = formClient(t)
    expect((await client.get('/')).location).toBe('/login')
    for (const path of ['/domains', '/domains/example.com', '/settings/api', '/settings/account']) {
      const answer = await client.get(path)
      expect(answer.status).toBe(303)
      expect(answer.location).toStartWith('/login')
    }
    await client.logIn(email)
    expect((await client.get('/')).location).toBe('/domains')
    expect((await client.get('/login')).location).toBe('/domains')
    expect((await client.get('/signup')).location).toBe('/domains')
  })
})

test('with an https PUBLIC_URL the cookie is Secure and __Host- prefixed', async () => {
  const secure = await startTestApp({ PUBLIC_URL: 'https://dmarc.example.org' }, { db: t.db })
  const client = formClient(secure)
  const answer = await client.signUp(unique('secure'))
  const cookie = cookieAttributes(answer.setCookies, '__Host-dw_session')!
  expect(cookie).toMatchObject({ secure: '', httponly: '', samesite: 'Lax', path: '/' })
  expect(cookie.domain).toBeUndefined()
  expect((await client.get('/domains')).status).toBe(200)
})
