import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { Server } from 'bun'
import type { Browser, Page } from 'playwright-core'
import { formClient, PASSWORD } from '../dashboard/client.ts'
import { type SmtpSink, startSmtpSink } from '../dashboard/smtp-sink.ts'
import { ARTIFACTS, launchBrowser, recordProblems } from '../support/browser.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'

// Members in Debian's Chromium: an owner invites by email on Settings → Account, the invited user
// opens the mailed link logged out, logs in, comes back to the invitation, joins, and switches
// between their accounts.

let t: TestApp
let smtp: SmtpSink
let service: Server<unknown>
let base: string
let browser: Browser
const problems: string[] = []

beforeAll(async () => {
  let app: TestApp | undefined
  service = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app!.app.handle(request) })
  base = `http://127.0.0.1:${service.port}`
  smtp = await startSmtpSink()
  t = await startTestApp({ PUBLIC_URL: base, MAIL_SMTP_URL: smtp.url })
  app = t
  browser = await launchBrowser()
  mkdirSync(ARTIFACTS, { recursive: true })
}, 60_000)
afterAll(async () => {
  await browser?.close()
  service?.stop(true)
  await t?.close()
  await smtp?.stop()
})

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`

async function labelled(page: Page) {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
      .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
      .map((el) => el.outerHTML),
  )
  expect(unlabelled).toEqual([])
  expect(await page.locator('h1').count()).toBe(1)
}

test('invite by email, open the link logged out, log in, join, switch accounts', async () => {
  const ann = unique('ann')
  const bob = unique('bob')
  expect((await formClient(t).signUp(ann)).status).toBe(303)
  expect((await formClient(t).signUp(bob)).status).toBe(303)

  const owner = recordProblems(await (await browser.newContext()).newPage(), [base], problems)
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
  await labelled(owner)
  await owner.screenshot({ path: `${ARTIFACTS}dashboard-members-owner.png`, fullPage: true })

  const link = /(http:\/\/\S+\/invitations\/[A-Za-z0-9_-]{43})/.exec((await smtp.next(bob)).text)![1]!
  const invited = recordProblems(await (await browser.newContext()).newPage(), [base], problems)
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
  await labelled(invited)

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
  expect(problems).toEqual([])
}, 90_000)
