import { afterAll, beforeAll, expect, test } from 'bun:test'
import { formClient, PASSWORD } from '../dashboard/client.ts'
import { type SmtpSink, startSmtpSink } from '../dashboard/smtp-sink.ts'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp } from '../support/browser.ts'
import type { TestApp } from '../support/test-app.ts'

// Members in Debian's Chromium: an owner invites by email on Settings → Account, the invited user
// opens the mailed link logged out, logs in, comes back to the invitation, joins, and switches
// between their accounts.

let smtp: SmtpSink
let served: ServedApp
let t: TestApp
let base: string
let chromium: BrowserSession

beforeAll(async () => {
  smtp = await startSmtpSink()
  served = await servedApp({ MAIL_SMTP_URL: smtp.url })
  t = served.t
  base = served.base
  chromium = await browserSession()
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await smtp?.stop()
})

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`

test('invite by email, open the link logged out, log in, join, switch accounts', async () => {
  const ann = unique('ann')
  const bob = unique('bob')
  expect((await formClient(t).signUp(ann)).status).toBe(303)
  expect((await formClient(t).signUp(bob)).status).toBe(303)

  const owner = await chromium.tab([base])
  await owner.goto(`${base}/login`)
  await owner.getByLabel('Email address').fill(ann)
  await owner.getByLabel('Password').fill(PASSWORD)
  await owner.getByRole('button', { name: 'Log in' }).click()
  await owner.waitForURL(`${base}/domains`)
  await owner.goto(`${base}/settings/account`)
  await owner.getByLabel('Email', { exact: true }).fill(bob)
  await owner.getByLabel('Role', { exact: true }).selectOption('member')
  await owner.getByRole('button', { name: 'Send invitation' }).click()
  await owner.waitForURL(`${base}/settings/account?invited=1#invitations`)
  expect(await owner.getByRole('status').textContent()).toContain('Invitation sent')
  expect(await owner.getByRole('button', { name: `Revoke the invitation of ${bob}` }).count()).toBe(1)
  await checkAccessible(owner)
  await owner.screenshot({ path: `${ARTIFACTS}dashboard-members-owner.png`, fullPage: true })

  const link = /(http:\/\/\S+\/invitations\/[A-Za-z0-9_-]{43})/.exec((await smtp.next(bob)).text)![1]!
  // Another user: a context of their own, with their own cookies.
  const invited = await chromium.tab([base], await chromium.browser.newContext())
  await invited.goto(link)
  expect(await invited.getByRole('heading', { level: 1 }).textContent()).toBe(`Join the account of ${ann}`)
  await invited.getByRole('link', { name: 'Log in' }).click()
  await invited.getByLabel('Email address').fill(bob)
  await invited.getByLabel('Password').fill(PASSWORD)
  await invited.getByRole('button', { name: 'Log in' }).click()
  await invited.waitForURL(link)
  await invited.screenshot({ path: `${ARTIFACTS}dashboard-invitation.png`, fullPage: true })
  await invited.getByRole('button', { name: `Join ${ann}` }).click()
  await invited.waitForURL(`${base}/settings/account?joined=1`)
  expect(await invited.getByRole('status').textContent()).toContain('You joined this account.')
  expect(await invited.getByRole('row', { name: new RegExp(`${bob} \\(you\\)`) }).count()).toBe(1)
  expect(await invited.getByRole('button', { name: 'Send invitation' }).count()).toBe(0)
  await checkAccessible(invited)

  await invited.getByLabel('Account', { exact: true }).selectOption({ label: `${bob} (owner)` })
  await invited.getByRole('button', { name: 'Switch account' }).click()
  await invited.waitForURL(`${base}/domains`)
  await invited.goto(`${base}/settings/account`)
  expect(await invited.locator('#switch-account + p').textContent()).toContain(
    `You are in the account of ${bob}`,
  )

  await owner.reload()
  expect(await owner.getByRole('button', { name: `Remove ${bob}` }).count()).toBe(1)
  await owner.screenshot({ path: `${ARTIFACTS}dashboard-members-team.png`, fullPage: true })
  expect(chromium.problems).toEqual([])
}, 90_000)
