import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { startWorkers } from '../../src/worker.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, servedApp, signUp } from '../support/browser.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { DAY, ingestMessage, settledMessage, tlsReport } from '../support/report-world.ts'
import type { TestApp } from '../support/test-app.ts'

// The report pages in Debian's Chromium: sign up, add a domain, ingest an aggregate report for it
// through the HTTP intake the API offers (the same path mail takes), and see it in the overview's
// uPlot chart (drawn on a canvas, its legend with the count) with no CSP violation or other
// console error and no request off the service; then the report detail, and a quarantined report
// retried from the quarantine page. Screenshots go to tests/artifacts/.

const PASSWORD = 'correct horse battery staple'
const suffix = Math.random().toString(36).slice(2, 8)
const email = `browser-reports-${suffix}@example.com`
const DOMAIN = 'chart.example'
const LATE = 'late.example'

let dns: DnsTestServer
let served: ServedApp
let t: TestApp
let base: string
let chromium: BrowserSession

function reportMail(domain: string, org: string, begin: number, rows: [ip: string, count: number][]): string {
  const records = rows.map(
    ([ip, count], i) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
<policy_evaluated><disposition>none</disposition><dkim>${i === 0 ? 'pass' : 'fail'}</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>${domain}</header_from></identifiers>
<auth_results><dkim><domain>${domain}</domain><selector>s1</selector><result>${i === 0 ? 'pass' : 'fail'}</result></dkim>
<spf><domain>${domain}</domain><result>fail</result></spf></auth_results></record>`,
  )
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<feedback><report_metadata><org_name>${org}</org_name><email>dmarc@${org}</email><report_id>${org}-${suffix}</report_id>
<date_range><begin>${begin}</begin><end>${begin + DAY - 1}</end></date_range></report_metadata>
<policy_published><domain>${domain}</domain><p>none</p></policy_published>
${records.join('\n')}
</feedback>`
  return multipart([
    attachment('application/gzip', `${org}.xml.gz`, Bun.gzipSync(new TextEncoder().encode(xml))),
  ])
}

/** POST /api/v1/ingest/messages over real HTTP; resolves once the worker has settled the message. */
const ingest = (token: string, raw: string) => ingestMessage(t, token, raw, base)
const settled = async (id: string) => (await settledMessage(t, id)).status

async function verify(name: string) {
  await t.db.database.db.execute(sql`update domains set verified_at = now() where name = ${name}`)
}

beforeAll(async () => {
  dns = await startDnsServer(
    Object.fromEntries(
      [DOMAIN, LATE].flatMap((name) => [
        [name, [{ type: 'TXT' as const, data: 'v=spf1 -all' }]],
        [`_dmarc.${name}`, [{ type: 'TXT' as const, data: 'v=DMARC1; p=none' }]],
      ]),
    ),
  )
  served = await servedApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' }, { queue: true })
  t = served.t
  base = served.base
  await startWorkers(t.runtime.boss!, t.runtime)
  chromium = await browserSession({ viewport: { width: 1280, height: 900 } })
}, 60_000)

afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await dns?.stop()
})

test('an ingested report shows in the uPlot chart, then in its detail page', async () => {
  const page = await chromium.tab([base])
  await signUp(page, base, email, PASSWORD)
  for (const name of [DOMAIN, LATE]) {
    await page.goto(`${base}/domains`)
    await page.getByLabel('Domain').fill(name)
    await page.getByRole('button', { name: 'Add domain' }).click()
    await page.waitForURL(`${base}/domains/${name}?added=1`)
  }
  // Ownership is proven through DNS in real use; here the test marks the first domain verified.
  await verify(DOMAIN)

  const token = await t.tokenFor(email)
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY
  const rows: [string, number][] = [
    ['192.0.2.1', 1200],
    ['198.51.100.7', 34],
  ]
  const stored = await ingest(token, reportMail(DOMAIN, 'receiver.example', today - DAY, rows))
  expect(stored.status).toBe('processed')

  await page.goto(`${base}/reports`)
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Reports')
  // app.js swapped the SVG for uPlot: a canvas, a legend with the period's count, the SVG hidden.
  const figure = page.locator('figure[data-chart="chart"]')
  await figure.locator('.uplot canvas').first().waitFor()
  expect(await figure.getAttribute('class')).toContain('enhanced')
  expect(await figure.locator('svg').isVisible()).toBe(false)
  const legend = figure.locator('.u-legend')
  expect(await legend.textContent()).toContain('1,234 in total')
  expect(await legend.textContent()).toContain('Messages per day')
  expect(await legend.textContent()).toContain('DMARC pass rate')
  expect(await legend.textContent()).toContain('97.2% overall')
  const size = await figure.locator('.uplot canvas').first().boundingBox()
  expect(size!.width).toBeGreaterThan(300)
  expect(size!.height).toBeGreaterThan(100)

  // Hovering the report's day: the legend and the tooltip show that day's figures.
  const over = figure.locator('.u-over')
  const box = (await over.boundingBox())!
  // The report's day is the second to last of the 30 (today is the last).
  await page.mouse.move(box.x + box.width * (28.5 / 30), box.y + box.height * 0.6)
  const tip = figure.locator('.chart-tip')
  await tip.waitFor({ state: 'visible' })
  const day = new Date((today - DAY) * 1000).toISOString().slice(0, 10)
  expect(await tip.textContent()).toBe(`${day}: 1,234 messages, 97.2%`)
  expect(await legend.textContent()).toContain(day)
  await page.screenshot({ path: `${ARTIFACTS}reports-overview.png`, fullPage: true })

  await page.getByRole('link', { name: 'receiver.example', exact: true }).click()
  await page.waitForURL(/\/reports\/\d+\?domain=chart\.example$/)
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
    'Aggregate report from receiver.example',
  )
  const records = page.locator('table tbody tr')
  expect(await records.count()).toBe(2)
  expect(await records.first().locator('th').textContent()).toBe('192.0.2.1')
  expect(await records.first().locator('td').first().textContent()).toBe('1,200')
  await page.screenshot({ path: `${ARTIFACTS}reports-detail.png`, fullPage: true })

  await page.getByRole('link', { name: 'Aggregate reports', exact: true }).click()
  await page.waitForURL(`${base}/reports/list`)
  expect(await page.locator('main').textContent()).toContain('1 report for all domains')
  await page.screenshot({ path: `${ARTIFACTS}reports-list.png`, fullPage: true })
  await page.close()
  expect(chromium.problems).toEqual([])
}, 90_000)

test('a report held in quarantine is retried from the quarantine page', async () => {
  const page = await chromium.tab([base])
  const token = await t.tokenFor(email)
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY
  const held = await ingest(token, reportMail(LATE, 'late-receiver.example', today - DAY, [['192.0.2.9', 5]]))
  expect(held.status).toBe('quarantined')

  await page.goto(`${base}/reports/quarantine`)
  expect(await page.locator('main').textContent()).toContain('domain_not_verified')
  await page.screenshot({ path: `${ARTIFACTS}reports-quarantine.png`, fullPage: true })
  await verify(LATE)
  await page.getByRole('button', { name: /^Retry/ }).click()
  await page.waitForURL(`${base}/reports/quarantine?retried=1`)
  expect(await page.getByRole('status').textContent()).toContain('queued to be processed again')
  expect(await settled(held.id)).toBe('processed')
  await page.reload()
  expect(await page.locator('main').textContent()).toContain('Nothing in quarantine.')

  await page.getByRole('link', { name: 'Aggregate reports', exact: true }).click()
  await page.getByLabel('Domain').selectOption(LATE)
  await page.getByRole('button', { name: 'Show' }).click()
  await page.waitForURL(/domain=late\.example/)
  expect(await page.locator('main').textContent()).toContain('late-receiver.example')
  await page.close()
  expect(chromium.problems).toEqual([])
}, 60_000)

test('the TLS page draws its own chart from a report sent over HTTPS (RFC 8460 §6.4)', async () => {
  const page = await chromium.tab([base])
  const token = await t.tokenFor(email)
  const begin = Math.floor(Date.now() / 1000 / DAY) * DAY - DAY
  const report = tlsReport(DOMAIN, `tls-${suffix}`, begin)
  const sent = await fetch(`${base}/api/v1/ingest/tls-rpt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/tlsrpt+json' },
    body: JSON.stringify(report),
  })
  expect(sent.status).toBe(201)

  await page.goto(`${base}/reports/tls?domain=${DOMAIN}`)
  const figure = page.locator('figure[data-chart="tls-chart"]')
  await figure.locator('.uplot canvas').first().waitFor()
  const legend = await figure.locator('.u-legend').textContent()
  expect(legend).toContain('Sessions per day')
  expect(legend).toContain('1,000 in total')
  expect(legend).toContain('90.0% overall')
  expect(await page.locator('main').textContent()).toContain('certificate-expired')
  await page.screenshot({ path: `${ARTIFACTS}reports-tls.png`, fullPage: true })
  await page.close()
  expect(chromium.problems).toEqual([])
}, 60_000)

test('the period select shows a chosen range, and an empty period jumps to the latest report', async () => {
  const page = await chromium.tab([base])
  const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY
  await page.goto(`${base}/reports/list?domain=${DOMAIN}`)
  // Typing a date selects the range; the page then shows it in the select, not "last 7 days".
  await page.getByLabel('From').fill(day(today - 200 * DAY))
  await page.getByLabel('To', { exact: true }).fill(day(today))
  expect(await page.getByLabel('Period').inputValue()).toBe('custom')
  await page.getByRole('button', { name: 'Show' }).click()
  await page.waitForURL(/from=/)
  const select = page.getByLabel('Period')
  expect(await select.inputValue()).toBe('custom')
  expect(await select.locator('option:checked').textContent()).toBe(
    `${day(today - 200 * DAY)} to ${day(today)}`,
  )
  // Choosing "last N days" clears the dates, so the choice is what is sent.
  await select.selectOption('30')
  expect(await page.getByLabel('From').inputValue()).toBe('')
  await page.getByRole('button', { name: 'Show' }).click()
  await page.waitForURL((url) => url.searchParams.get('days') === '30' && !url.searchParams.get('from'))
  expect(await page.getByLabel('Period').inputValue()).toBe('30')

  // A period long before the report: the page offers the 30 days ending on the latest report.
  await page.goto(
    `${base}/reports/list?domain=${DOMAIN}&from=${day(today - 300 * DAY)}&to=${day(today - 200 * DAY)}`,
  )
  expect(await page.locator('main').textContent()).toContain(`0 reports for ${DOMAIN}`)
  await page.getByRole('link', { name: /^Show \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}$/ }).click()
  await page.waitForURL(/from=.*to=/)
  expect(await page.locator('main').textContent()).toContain(`1 report for ${DOMAIN}`)
  await page.screenshot({ path: `${ARTIFACTS}reports-period.png`, fullPage: true })
  await page.close()
  expect(chromium.problems).toEqual([])
}, 60_000)
