import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { deleteExpiredSessions } from '../../infrastructure/repositories/pg-session-store.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { cookieAttributes, csrfOf, formClient } from './client.ts'

// Sliding expiry and the 30-day inactivity rule (docs/dashboard.md), driven by the app's clock.

const DAY = 86_400_000
let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '1000' })
}, 60_000)
afterAll(() => t.close())

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`
const at = (start: Date, ms: number) => new Date(start.getTime() + ms)

async function expiresAt(cookie: string): Promise<Date> {
  const hash = new Bun.CryptoHasher('sha256').update(cookie).digest('hex')
  const result = await t.db.database.db.execute(sql`select expires_at from sessions where id_hash = ${hash}`)
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    expires_at: unknown
  }[]
  return new Date(rows[0]!.expires_at as string)
}

test('a session used within 30 days slides on; one left alone for 30 days is logged out', async () => {
  const start = new Date()
  t.clock.now = start
  const client = formClient(t)
  await client.signUp(unique('slide'))
  const cookie = client.jar.get('dw_session')!
  expect((await expiresAt(cookie)).getTime()).toBe(at(start, 30 * DAY).getTime())

  // Within the hour nothing is written and no cookie is sent again.
  t.clock.now = at(start, 30 * 60_000)
  const early = await client.get('/domains')
  expect(early.status).toBe(200)
  expect(early.setCookies).toEqual([])

  // After it, the expiry moves to 30 days from now and the cookie's lifetime follows.
  t.clock.now = at(start, 20 * DAY)
  const later = await client.get('/domains')
  expect(later.status).toBe(200)
  expect(cookieAttributes(later.setCookies, 'dw_session')).toMatchObject({
    value: cookie,
    'max-age': String(30 * 86_400),
  })
  expect((await expiresAt(cookie)).getTime()).toBe(at(start, 50 * DAY).getTime())

  // 45 days after login but only 25 after last use: still in.
  t.clock.now = at(start, 45 * DAY)
  expect((await client.get('/settings/account')).status).toBe(200)

  // 30 days without use: logged out, with next, and the cookie cleared.
  t.clock.now = at(start, 45 * DAY + 30 * DAY + 1000)
  const expired = await client.get('/settings/api')
  expect(expired.status).toBe(303)
  expect(expired.location).toBe('/login?next=%2Fsettings%2Fapi')
  expect(cookieAttributes(expired.setCookies, 'dw_session')?.['max-age']).toBe('0')
  const hash = new Bun.CryptoHasher('sha256').update(cookie).digest('hex')
  const left = await t.db.database.db.execute(sql`select 1 from sessions where id_hash = ${hash}`)
  expect((Array.isArray(left) ? left : (left as { rows: unknown[] }).rows).length).toBe(0)
  t.clock.now = new Date()
})

test('a forged or malformed cookie is treated as no session', async () => {
  for (const value of ['x', 'A'.repeat(43), 'A'.repeat(400), '%00']) {
    const answer = await t.app.handle(
      new Request(`${t.config.publicUrl}/domains`, { headers: { cookie: `dw_session=${value}` } }),
    )
    expect(answer.status).toBe(303)
    expect(answer.headers.get('location')).toBe('/login')
  }
})

test('"log out other sessions" ends every other session of the user, not this one', async () => {
  const email = unique('many')
  const laptop = formClient(t)
  const phone = formClient(t)
  const tablet = formClient(t)
  await laptop.signUp(email)
  await phone.logIn(email)
  await tablet.logIn(email)
  const stranger = formClient(t)
  await stranger.signUp(unique('stranger'))

  const account = await laptop.get('/settings/account')
  expect(account.html).toContain('2 other sessions')
  const answer = await laptop.post('/settings/account/logout-others', { _csrf: csrfOf(account.html) })
  expect(answer.location).toBe('/settings/account?logged_out=2')
  expect((await laptop.get(answer.location!)).html).toContain('Logged out 2 other sessions.')
  expect((await laptop.get('/domains')).status).toBe(200)
  expect((await phone.get('/domains')).location).toBe('/login')
  expect((await tablet.get('/domains')).location).toBe('/login')
  expect((await stranger.get('/domains')).status).toBe(200)
})

test('expired sessions are deleted by the maintenance helper', async () => {
  const client = formClient(t)
  await client.signUp(unique('sweep'))
  const removed = await deleteExpiredSessions(t.db.database.db, new Date(Date.now() + 31 * DAY))
  expect(removed.sessions).toBeGreaterThanOrEqual(1)
  expect((await client.get('/domains')).status).toBe(303)
})
