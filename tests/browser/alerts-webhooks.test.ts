import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { Page } from 'playwright-core'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import { webhookJobDeps } from '../../src/compose/webhooks.ts'
import { registerWebhookJobs, type WebhookWorkers } from '../../src/jobs/webhooks.ts'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp, signUp } from '../support/browser.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import type { TestApp } from '../support/test-app.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts'

// In Debian's Chromium: an alert opened for the account (through the alert store, as the alert jobs
// open them) is found in /alerts, opened and resolved; then Settings → API access: a webhook URL
// set, the signing secret revealed and rotated, a test ping sent, and its delivery to a real local
// receiver (which checks the signature with the secret the page showed) seen in the delivery log.
// The webhook relay and delivery jobs run in-process on pg-boss. Screenshots go to tests/artifacts/.

const PASSWORD = 'correct horse battery staple'
const email = `hooks-browser-${Math.random().toString(36).slice(2, 8)}@example.com`
const ALERT_TITLE = 'Report intake quarantine is growing'

let dns: DnsTestServer
let served: ServedApp
let t: TestApp
let base: string
let chromium: BrowserSession
let workers: WebhookWorkers
const receivers: WebhookReceiver[] = []

beforeAll(async () => {
  dns = await startDnsServer({})
  served = await servedApp(
    {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '300',
      // The receiver listens on loopback, which the webhook URL check refuses otherwise.
      WEBHOOK_ALLOW_PRIVATE: '1',
    },
    { queue: true },
  )
  t = served.t
  base = served.base
  workers = await registerWebhookJobs(t.runtime.boss!, webhookJobDeps(t.runtime, t.runtime.boss!))
  chromium = await browserSession({ viewport: { width: 1280, height: 800 } })
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await workers?.stopRelay()
  await served?.close()
  for (const receiver of receivers) await receiver.stop()
  await dns?.stop()
}, 30_000)

/** A tab that records problems (recordProblems) and says yes when a form asks for confirmation. */
async function tab(): Promise<Page> {
  const page = await chromium.tab([base])
  // The resolve and rotate forms ask for confirmation (data-confirm): the user says yes.
  page.on('dialog', (dialog) => void dialog.accept())
  return page
}

async function accountOf(address: string): Promise<string> {
  const rows = rowsOf<{ account_id: string }>(
    await t.db.database.db.execute(
      sql`select m.account_id from memberships m join users u on u.id = m.user_id where lower(u.email) = lower(${address})`,
    ),
  )
  return rows[0]!.account_id
}

test('sign up, find the open alert, resolve it', async () => {
  const page = await tab()
  await signUp(page, base, email, PASSWORD)

  const accountId = await accountOf(email)
  const alerts = pgAlertStore(t.db.database.db)
  await alerts.applyPlan(
    accountId,
    null,
    {
      create: [
        {
          type: 'ingest_quarantine_growing',
          subject: '',
          severity: 'high',
          title: ALERT_TITLE,
          details: { evidence: { quarantined: 42 }, remedy: 'Look at the quarantined messages.' },
        },
      ],
      update: [],
      resolve: [],
    },
    t.clock.now,
  )

  await page.getByRole('link', { name: 'Alerts', exact: true }).click()
  await page.waitForURL(`${base}/alerts`)
  await checkAccessible(page)
  const row = page.locator('tbody tr', { hasText: ALERT_TITLE })
  expect(await row.count()).toBe(1)
  expect(await row.locator('.badge').last().textContent()).toBe('open')
  await page.screenshot({ path: `${ARTIFACTS}alerts-list.png`, fullPage: true })

  await row.getByRole('link', { name: ALERT_TITLE }).click()
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(ALERT_TITLE)
  expect(await page.locator('main').textContent()).toContain('Look at the quarantined messages.')
  await checkAccessible(page)
  await page.getByRole('button', { name: 'Resolve' }).click()
  await page.waitForURL(/\/alerts\/[^/]+\?resolved=1$/)
  expect(await page.getByRole('status').textContent()).toContain('The alert is resolved.')
  expect(await page.locator('main').textContent()).toContain('resolved by a user')
  expect(await page.getByRole('button', { name: 'Resolve' }).count()).toBe(0)
  await page.screenshot({ path: `${ARTIFACTS}alerts-resolved.png`, fullPage: true })

  // What the page says is what is stored; the open list no longer shows it.
  const [stored] = (await alerts.list(accountId, { status: 'resolved' }, { page: 1, perPage: 10 })).items
  expect(stored).toMatchObject({ title: ALERT_TITLE, status: 'resolved', resolution: 'user' })
  await page.getByRole('link', { name: 'Alerts', exact: true }).click()
  expect(await page.locator('main').textContent()).toContain('No alerts match.')
  await page.close()
  expect(chromium.problems).toEqual([])
}, 90_000)

test('set a webhook URL, reveal and rotate the secret, send a test ping and see it delivered', async () => {
  const page = await tab()
  const secretShown = async () => {
    await page.getByText('Reveal the signing secret').click()
    const secret = (await page.locator('#webhook-secret').textContent())!.trim()
    expect(secret).toMatch(/^whsec_/)
    return secret
  }
  const save = async (url: string) => {
    await page.getByLabel('Webhook URL').fill(url)
    await page.getByRole('button', { name: 'Save URL' }).click()
    await page.waitForURL(`${base}/settings/api?webhook=saved#webhooks`)
    expect(await page.getByRole('status').textContent()).toContain('The webhook URL is saved.')
  }

  await page.goto(`${base}/domains`)
  await page.getByRole('link', { name: 'API access', exact: true }).click()
  await page.waitForURL(`${base}/settings/api`)
  expect(await page.getByRole('button', { name: 'Send test ping' }).isDisabled()).toBe(true)
  // A first endpoint, set up before its owner knew the secret.
  const first = startWebhookReceiver()
  receivers.push(first)
  await save(first.url)
  const original = await secretShown()
  await checkAccessible(page)

  await page.getByRole('button', { name: 'Rotate secret' }).click()
  await page.waitForURL(`${base}/settings/api?webhook=rotated#webhooks`)
  expect(await page.getByRole('status').textContent()).toContain('The signing secret is rotated')
  const rotated = await secretShown()
  expect(rotated).not.toBe(original)
  await page.screenshot({ path: `${ARTIFACTS}webhooks-secret-rotated.png`, fullPage: true })

  // The endpoint that checks signatures with the secret the page showed; the URL now points at it.
  const receiver = startWebhookReceiver({ secret: rotated })
  receivers.push(receiver)
  await save(receiver.url)
  expect(await secretShown()).toBe(rotated)

  await page.getByRole('button', { name: 'Send test ping' }).click()
  await page.waitForURL(`${base}/settings/api?webhook=pinged#webhooks`)
  expect(await page.getByRole('status').textContent()).toContain('Test ping queued.')
  const ping = page.locator('#webhooks ~ table tbody tr', { hasText: 'ping' })
  expect(await ping.count()).toBe(1)

  // The relay posts it within a second or so; the page shows it once it is reloaded.
  const deadline = Date.now() + 20_000
  while ((await ping.locator('.badge').textContent()) !== 'delivered' && Date.now() < deadline) {
    await Bun.sleep(250)
    await page.reload()
  }
  expect(await ping.locator('.badge').textContent()).toBe('delivered')
  const cells = await ping.locator('td').allTextContents()
  expect(cells.slice(1, 3)).toEqual(['1', '200'])
  await checkAccessible(page)
  await page.locator('#webhooks').scrollIntoViewIfNeeded()
  await page.screenshot({ path: `${ARTIFACTS}webhooks-delivered.png`, fullPage: true })

  const pings = receiver.arrivals.filter((a) => JSON.parse(a.body).event === 'ping')
  expect(pings).toHaveLength(1)
  expect(pings[0]).toMatchObject({ method: 'POST', path: '/hooks', verified: true, answer: 200 })
  expect(first.arrivals).toEqual([])
  await page.close()
  expect(chromium.problems).toEqual([])
}, 90_000)
