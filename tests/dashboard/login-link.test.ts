import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLoginLink, loginLinkPath } from '../../domain/accounts/login-link.ts'
import { pgCredentialStore } from '../../infrastructure/repositories/pg-credential-store.ts'
import { pgLoginLinkStore } from '../../infrastructure/repositories/pg-login-link-store.ts'
import { deleteExpiredSessions } from '../../infrastructure/repositories/pg-session-store.ts'
import { systemRandom } from '../../src/compose.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { formClient, PASSWORD } from './client.ts'

// The one-time sign-in link's pages (the CLI that prints links: tests/src/cli-verify-login.test.ts):
// malformed and unknown links, one use among concurrent ones, the first-password form's checks.

let t: TestApp

async function linkFor(email: string): Promise<string> {
  const db = t.db.database.db
  const made = await createLoginLink(
    { credentials: pgCredentialStore(db), links: pgLoginLinkStore(db), random: systemRandom },
    { email, now: t.clock.now },
  )
  if (!made.ok) throw new Error(made.failure.code)
  return loginLinkPath(made.value.token)
}

beforeAll(async () => {
  t = await startTestApp()
})
afterAll(() => t.close())

test('malformed and unknown links answer the same 400 page, without a session', async () => {
  for (const path of ['/login-link/short', `/login-link/${'A'.repeat(43)}`, '/login-link/%ZZ']) {
    const page = await formClient(t).get(path)
    expect(page.status).toBe(400)
    expect(page.html).toContain('This sign-in link is invalid, used or expired.')
  }
  const posted = await formClient(t).submit('/login', {}, `/login-link/${'A'.repeat(43)}`)
  expect(posted.status).toBe(400)
  expect(posted.setCookies.some((c) => c.includes('dw_session='))).toBe(false)
})

test('of two uses of one link, one signs in', async () => {
  const { email } = await t.account()
  const path = await linkFor(email)
  const [a, b] = [formClient(t), formClient(t)]
  const tokens = await Promise.all([a, b].map(async (c) => (await c.get(path)).html))
  const answers = await Promise.all(
    [a, b].map((c, i) => c.post(path, { _csrf: /name="_csrf" value="([^"]+)"/.exec(tokens[i]!)![1]! })),
  )
  expect(answers.map((r) => r.status).sort()).toEqual([303, 400])
})

test('the first password is checked like any other, and only a user without one may set it here', async () => {
  const { email } = await t.account()
  const browser = formClient(t)
  expect((await browser.submit(await linkFor(email), {})).location).toBe('/settings/password?welcome=1')
  const short = await browser.submit('/settings/password', { password: 'short' })
  expect(short.status).toBe(400)
  expect(short.html).toContain('at least 10 characters')
  const mine = await browser.submit('/settings/password', { password: email })
  expect(mine.status).toBe(400)
  expect((await browser.submit('/settings/password', { password: PASSWORD })).status).toBe(303)
  // Set: the form is gone, and posting to it anyway changes nothing.
  const csrf = await browser.csrf()
  const twice = await browser.post('/settings/password', { _csrf: csrf, password: 'another long password' })
  expect(twice.status).toBe(400)
  expect(twice.html).toContain('You have a password already')
  expect((await formClient(t).logIn(email)).location).toBe('/domains')
  // Logged out visitors are sent to log in.
  expect((await formClient(t).get('/settings/password')).location).toStartWith('/login')
})

test('expired links are swept by the maintenance helper; live ones stay', async () => {
  const { email } = await t.account()
  const path = await linkFor(email)
  const early = await deleteExpiredSessions(t.db.database.db, new Date(Date.now() + 3_600_000))
  expect((await formClient(t).get(path)).status).toBe(200)
  const late = await deleteExpiredSessions(t.db.database.db, new Date(Date.now() + 25 * 3_600_000))
  expect(early.links).toBe(0)
  expect(late.links).toBeGreaterThanOrEqual(1)
  expect((await formClient(t).get(path)).status).toBe(400)
})
