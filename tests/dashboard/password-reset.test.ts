import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, formClient, PASSWORD } from './client.ts'
import { type SmtpSink, startSmtpSink } from './smtp-sink.ts'

// Password reset by emailed link, end to end through a local SMTP server (MAIL_SMTP_URL).

let t: TestApp
let smtp: SmtpSink
beforeAll(async () => {
  smtp = await startSmtpSink()
  t = await startTestApp({
    MAIL_SMTP_URL: smtp.url,
    MAIL_FROM: 'dmarcwatch <noreply@dmarc.example.org>',
    RATE_LIMIT_LOGIN_PER_MINUTE: '1000',
  })
}, 60_000)
afterAll(async () => {
  await t.close()
  await smtp.stop()
})

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`
const NEW_PASSWORD = 'a brand new passphrase'

function linkIn(text: string): string {
  const match = new RegExp(`${t.config.publicUrl}(/password-reset/[A-Za-z0-9_-]{43})`).exec(text)
  if (!match) throw new Error(`no reset link in:\n${text}`)
  return match[1]!
}

test('a mailed link sets a new password once, logs in, and ends every other session', async () => {
  const email = unique('reset')
  const elsewhere = formClient(t)
  await elsewhere.signUp(email)
  expect((await elsewhere.get('/domains')).status).toBe(200)

  const visitor = formClient(t)
  const asked = await visitor.submit('/password-reset', { email: email.toUpperCase() })
  expect(asked.status).toBe(200)
  expect(asked.html).toContain('If an account exists for that address')
  const mail = await smtp.next(email)
  expect(mail.from).toBe('noreply@dmarc.example.org')
  expect(mail.subject).toBe('Reset your dmarcwatch password')
  const link = linkIn(mail.text)

  const form = await visitor.get(link)
  expect(form.status).toBe(200)
  expect(form.html).toContain('Choose a new password')
  // A refused password leaves the link usable.
  const short = await visitor.post(link, { _csrf: csrfOf(form.html), password: 'short' })
  expect(short.status).toBe(400)
  expect(short.html).toContain('at least 10 characters')
  const done = await visitor.post(link, { _csrf: csrfOf(form.html), password: NEW_PASSWORD })
  expect(done.status).toBe(303)
  expect(done.location).toBe('/domains?password_reset=1')
  expect((await visitor.get(done.location!)).html).toContain('Your password is changed')

  // Every session from before is gone; the old password no longer works, the new one does.
  expect((await elsewhere.get('/domains')).location).toBe('/login')
  expect((await formClient(t).logIn(email, PASSWORD)).status).toBe(400)
  expect((await formClient(t).logIn(email, NEW_PASSWORD)).status).toBe(303)

  // Single use.
  const again = await formClient(t).get(link)
  expect(again.status).toBe(400)
  expect(again.html).toContain('invalid, used or expired')
  const reuse = formClient(t)
  const page = await reuse.get('/login')
  const replay = await reuse.post(link, { _csrf: csrfOf(page.html), password: 'yet another passphrase' })
  expect(replay.status).toBe(400)
  expect((await formClient(t).logIn(email, NEW_PASSWORD)).status).toBe(303)
})

test('an unknown email gets the same answer and no mail', async () => {
  const known = unique('known')
  await formClient(t).signUp(known)
  const nobody = unique('nobody')
  const a = await formClient(t).submit('/password-reset', { email: nobody })
  const b = await formClient(t).submit('/password-reset', { email: known })
  expect(a.status).toBe(b.status)
  const strip = (html: string) => html.replace(/name="_csrf" value="[^"]+"/, '')
  expect(strip(a.html)).toBe(strip(b.html))
  await smtp.next(known)
  await Bun.sleep(200)
  expect(smtp.mails.some((mail) => mail.to.includes(nobody))).toBe(false)
})

test('a link expires after an hour, and a newer link voids nothing but is voided by use', async () => {
  const email = unique('expiry')
  await formClient(t).signUp(email)
  const start = new Date()
  t.clock.now = start
  await formClient(t).submit('/password-reset', { email })
  const first = linkIn((await smtp.next(email)).text)
  await formClient(t).submit('/password-reset', { email })
  const second = linkIn((await smtp.next(email)).text)

  t.clock.now = new Date(start.getTime() + 61 * 60_000)
  expect((await formClient(t).get(first)).status).toBe(400)
  t.clock.now = new Date(start.getTime() + 30 * 60_000)
  const client = formClient(t)
  const form = await client.get(second)
  expect((await client.post(second, { _csrf: csrfOf(form.html), password: NEW_PASSWORD })).status).toBe(303)
  // Using one link voids the user's other open links.
  expect((await formClient(t).get(first)).status).toBe(400)
  t.clock.now = new Date()
})

test('a malformed link is refused without a query', async () => {
  const page = await formClient(t).get('/password-reset/not-a-token')
  expect(page.status).toBe(400)
  expect(page.html).toContain('Ask for a new link')
})

test('without MAIL_SMTP_URL the mail, link included, is written to the log', async () => {
  const logged = await startTestApp({}, { db: t.db })
  const email = unique('logged')
  await formClient(logged).signUp(email)
  await formClient(logged).submit('/password-reset', { email })
  await Bun.sleep(50)
  const line = logged.logs.find((l) => l.includes('mail not sent'))
  expect(line).toBeDefined()
  const entry = JSON.parse(line!)
  expect(entry).toMatchObject({ level: 'info', to: email, subject: 'Reset your dmarcwatch password' })
  expect(entry.text).toMatch(/\/password-reset\/[A-Za-z0-9_-]{43}/)
})
