import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { enrichSources } from '../../infrastructure/repositories/pg-source-enrichment.ts'
import { startWorkers } from '../../src/worker.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp, signUp } from '../support/browser.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { ingestMessage } from '../support/report-world.ts'
import { type ReportRow, reportXml } from '../support/source-reports.ts'
import type { TestApp } from '../support/test-app.ts'

// A domain's pages in Debian's Chromium, with real reports: signed up and added through the forms,
// two aggregate reports through the HTTP intake and the worker, reverse DNS from the enrichment
// job, SPF includes from a loopback DNS server. The domain page shows the chart and the sources;
// SPF management is activated and a detected sender added by clicking, and the API agrees.
// Screenshots go to tests/artifacts/.

const PASSWORD = 'correct horse battery staple'
const DOMAIN = 'shop.example'
const email = `browser-domain-${Math.random().toString(36).slice(2, 8)}@example.com`

let dns: DnsTestServer
let served: ServedApp
let t: TestApp
let base: string
let chromium: BrowserSession

beforeAll(async () => {
  dns = await startDnsServer({
    [DOMAIN]: [{ type: 'TXT', data: 'v=spf1 include:_spf.google.com ~all' }],
    [`_dmarc.${DOMAIN}`]: [{ type: 'TXT', data: `v=DMARC1; p=none; rua=mailto:dmarc@${DOMAIN}` }],
    '_spf.google.com': [{ type: 'TXT', data: 'v=spf1 ip4:74.125.0.0/16 ~all' }],
    'sendgrid.net': [{ type: 'TXT', data: 'v=spf1 ip4:149.72.0.0/16 ip4:167.89.0.0/17 -all' }],
    '1.0.125.74.in-addr.arpa': [{ type: 'PTR', data: 'mail-1.google.com' }],
    '20.10.72.149.in-addr.arpa': [{ type: 'PTR', data: 'o1.ptr4242.sendgrid.net' }],
  })
  served = await servedApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '500' }, { queue: true })
  t = served.t
  base = served.base
  await startWorkers(t.runtime.boss!, t.runtime)
  chromium = await browserSession({ viewport: { width: 1280, height: 800 } })
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await dns?.stop()
})

/** Rows of this test's reports: signed by `dkim` when given, SPF checked for the domain. */
const row = (ip: string, count: number, spf: 'pass' | 'fail', dkim?: string): ReportRow => ({
  ip,
  count,
  spf: [DOMAIN, spf],
  ...(dkim === undefined ? {} : { dkim: [dkim, 's1', 'pass'] as [string, string, string] }),
})

/** Through the HTTP intake, then waits for the worker to process it. */
async function ingest(token: string, xml: string, name: string) {
  const raw = multipart([
    attachment('application/gzip', `${name}.xml.gz`, Bun.gzipSync(new TextEncoder().encode(xml))),
  ])
  const { status } = await ingestMessage(t, token, raw)
  if (status !== 'processed') throw new Error(`report ${name} ${status}`)
}

test('a domain with reports: the chart and the sources, then SPF management by clicking', async () => {
  const page = await chromium.tab([base])
  await signUp(page, base, email, PASSWORD)
  await page.getByLabel('Domain', { exact: true }).fill(DOMAIN)
  await page.getByRole('button', { name: 'Add domain' }).click()
  await page.waitForURL(`${base}/domains/${DOMAIN}?added=1`)

  // Ownership proven (the TXT check has its own tests), and two days of reports:
  // Google passes; SendGrid signs as the domain but its MAIL FROM fails SPF; a spoofer fails all.
  await t.db.database.db.execute(sql`update domains set verified_at = now() where name = ${DOMAIN}`)
  const token = await t.tokenFor(email)
  const DAY = 86_400
  const today = Math.floor(t.clock.now.getTime() / 1000 / DAY) * DAY
  await ingest(
    token,
    reportXml(DOMAIN, 'google.com', 'g-1', today - 2 * DAY, [
      row('74.125.0.1', 60, 'pass', DOMAIN),
      row('149.72.10.20', 30, 'fail', DOMAIN),
      row('203.0.113.9', 20, 'fail'),
    ]),
    'google',
  )
  await ingest(
    token,
    reportXml(DOMAIN, 'yahoo.com', 'y-1', today - DAY, [
      row('74.125.0.1', 40, 'pass', DOMAIN),
      row('149.72.10.20', 10, 'fail', DOMAIN),
    ]),
    'yahoo',
  )
  await enrichSources({ db: t.db.database.db, dns: t.runtime.dns, now: t.runtime.now }, { limit: 100 })

  await page.goto(`${base}/domains`)
  await page.getByRole('link', { name: DOMAIN }).click()
  await page.waitForURL(`${base}/domains/${DOMAIN}`)
  expect(await page.locator('figure.chart').first().isVisible()).toBe(true)
  const sources = page.locator('table.sources tbody tr')
  expect(await sources.count()).toBe(3)
  expect(await sources.nth(0).textContent()).toContain('74.125.0.1')
  expect(await sources.nth(1).textContent()).toContain('SendGrid')
  expect(await sources.nth(2).textContent()).toContain('203.0.113.9')
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}domain-detail.png`, fullPage: true })

  await page.getByRole('link', { name: 'Sources', exact: true }).click()
  await page.waitForURL(`${base}/domains/${DOMAIN}/sources`)
  expect(await page.locator('table.sources tbody tr').count()).toBe(3)
  expect(await page.locator('ol.issues').textContent()).toContain('Block spoofing')
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}domain-sources.png`, fullPage: true })

  await page.getByRole('link', { name: 'SPF', exact: true }).click()
  await page.waitForURL(`${base}/domains/${DOMAIN}/spf`)
  expect(await page.locator('ul.tree').textContent()).toContain('_spf.google.com')
  await checkAccessible(page)
  await page.getByRole('button', { name: 'Activate SPF management' }).click()
  await page.waitForURL(`${base}/domains/${DOMAIN}/spf?done=activated`)
  expect(await page.getByRole('status').first().textContent()).toContain('SPF management is active.')
  await page.screenshot({ path: `${ARTIFACTS}domain-spf-activated.png`, fullPage: true })

  await page.getByRole('button', { name: 'Add include:sendgrid.net' }).click()
  await page.waitForURL(`${base}/domains/${DOMAIN}/spf?done=added`)
  expect(await page.locator('section[aria-labelledby="history"] tbody tr').count()).toBe(2)
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}domain-spf-source-added.png`, fullPage: true })

  const api = await fetch(`${base}/api/v1/domains/${DOMAIN}/spf`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const data = ((await api.json()) as { data: { management: any } }).data.management
  expect(data.version).toBe(2)
  expect(data.config.sources.map((s: { term: string }) => s.term)).toEqual([
    'include:_spf.google.com',
    'include:sendgrid.net',
  ])
  expect(await page.locator('main').textContent()).toContain(data.publish.record)
  await page.close()
  expect(chromium.problems).toEqual([])
}, 120_000)
