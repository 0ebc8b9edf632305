import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { launchBrowser, recordProblems } from './../support/browser.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { freePort } from '../support/free-port.ts'
import { runCli, type ServiceProcess, startService } from '../support/processes.ts'

// The README's quick start, literally, from an empty DATA_DIR on the embedded database: the service
// started as `bun run start` does, `bun run cli account create` (its sign-in link), `bun run cli
// demo`, then a person in a browser: the link, the password page's "Later", the demo domain's
// overview chart and sources, and an alert for it. CLI and service are separate processes, so the
// CLI's queue and database traffic go through the service's socket in DATA_DIR.

let dataDir: string
let dns: DnsTestServer
let service: ServiceProcess
let browser: Browser
let env: Record<string, string>

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'dw-quick-start-'))
  // No network here: the demo's SPF includes ask an empty loopback server instead of timing out.
  dns = await startDnsServer({})
  const port = await freePort()
  env = { DATA_DIR: dataDir, PORT: String(port), DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' }
  service = await startService(env)
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  service?.child.kill('SIGTERM')
  await service?.child.exited
  await dns?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('install, start, account with its sign-in link, demo: the demo domain shows its chart, sources and an alert', async () => {
  const account = await runCli(['account', 'create', '--email', 'you@example.com'], env)
  expect(account.stderr).toBe('')
  const created = JSON.parse(account.stdout)
  expect(created.sign_in_link).toStartWith(`http://localhost:${env.PORT}/login-link/`)

  const demo = await runCli(['demo', '--email', 'you@example.com'], env)
  expect(demo.stderr).toBe('')
  expect(JSON.parse(demo.stdout)).toMatchObject({ domain: 'dmarcwatch-demo.example', digested: true })

  const base = `http://localhost:${env.PORT}`
  const problems: string[] = []
  const page = recordProblems(await browser.newPage(), [base], problems)
  await page.goto(created.sign_in_link)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('link', { name: /Later/ }).click()
  await page.waitForURL(`${base}/domains`)

  await page.getByRole('link', { name: 'dmarcwatch-demo.example' }).click()
  await page.waitForURL(`${base}/domains/dmarcwatch-demo.example`)
  await expect(page.getByRole('heading', { name: 'Mail in the last 30 days' }).isVisible()).resolves.toBe(
    true,
  )
  // The chart is drawn (uPlot's canvas) with the figures of the reports the demo sent.
  await page.locator('.chart canvas, canvas').first().waitFor({ state: 'visible' })
  const sources = page.locator('section', { hasText: 'Top sources' }).locator('tbody tr')
  expect(await sources.count()).toBeGreaterThan(0)
  await expect(sources.first().textContent()).resolves.toContain('Google Workspace')

  await page.goto(`${base}/alerts`)
  const alert = page
    .locator('tbody tr', { hasText: 'dmarcwatch-demo.example' })
    .filter({ hasText: /Spoofing/ })
  await alert.first().waitFor({ state: 'visible' })
  expect(problems).toEqual([])
}, 120_000)
