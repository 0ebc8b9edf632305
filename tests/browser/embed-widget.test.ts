import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Server } from 'bun'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, servedApp } from '../support/browser.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'

// The scanner widget in a real browser: a host page on one origin embeds the script served by the
// service on another; the key allows the first origin only.

let dns: DnsTestServer
let served: ServedApp
let hostPage: Server<unknown>
let otherPage: Server<unknown>
let chromium: BrowserSession

const page = (serviceUrl: string, key: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Host</title></head>
<body style="font-family: Georgia, serif; color: #222">
  <h1>Check your domain</h1>
  <div data-dmarcwatch-scanner style="--dw-accent: #6a1b9a"></div>
  <script src="${serviceUrl}/embed/widget.js" data-key="${key}" async></script>
</body></html>`

beforeAll(async () => {
  dns = await startDnsServer({
    'scanme.example': [{ type: 'TXT', data: 'v=spf1 +all' }],
    '_dmarc.scanme.example': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  })
  served = await servedApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' })
  const serviceUrl = served.base
  const serve = (html: () => string) =>
    Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response(html(), { headers: { 'content-type': 'text/html' } }),
    })
  let key = ''
  hostPage = serve(() => page(serviceUrl, key))
  otherPage = serve(() => page(serviceUrl, key))
  const owner = await served.t.account()
  const created = await served.t.request('POST', '/api/v1/embed-keys', {
    token: owner.token,
    body: { name: 'Host', allowed_origins: [`http://127.0.0.1:${hostPage.port}`] },
  })
  key = created.body.data.key
  chromium = await browserSession()
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  hostPage?.stop(true)
  otherPage?.stop(true)
  await served?.close()
  await dns?.stop()
})

test('the widget renders a scanner, scans a domain and shows the grade and findings', async () => {
  // A visitor of the host page: only the host page and the service are reached.
  const host = `http://127.0.0.1:${hostPage.port}`
  const tab = await chromium.tab([host, served.base])
  await tab.goto(`${host}/`)
  const input = tab.locator('[data-dmarcwatch-scanner] input[name=domain]')
  await input.fill('scanme.example')
  await tab.locator('[data-dmarcwatch-scanner] button').click()
  const grade = tab.locator('[data-dmarcwatch-scanner] .grade')
  await grade.waitFor({ timeout: 15_000 })
  expect(await grade.textContent()).toBe('F')
  const text = await tab.locator('[data-dmarcwatch-scanner] .result').textContent()
  expect(text).toContain('DMARC: p=none')
  expect(text).toContain('+all')
  // It inherits the host page's font.
  const font = await input.evaluate((el) => getComputedStyle(el).fontFamily)
  expect(font).toContain('Georgia')
  await tab.screenshot({ path: `${ARTIFACTS}embed-widget.png`, fullPage: true })
  expect(chromium.problems).toEqual([])
  await tab.close()
}, 60_000)

test('on an origin the key does not allow, the widget shows an error and gets no data', async () => {
  const tab = await chromium.browser.newPage()
  await tab.goto(`http://127.0.0.1:${otherPage.port}/`)
  await tab.locator('[data-dmarcwatch-scanner] input[name=domain]').fill('scanme.example')
  await tab.locator('[data-dmarcwatch-scanner] button').click()
  const error = tab.locator('[data-dmarcwatch-scanner] .error-text')
  await error.waitFor({ timeout: 15_000 })
  expect(await error.textContent()).toBe('The scanner could not be reached.')
  expect(await tab.locator('[data-dmarcwatch-scanner] .grade').count()).toBe(0)
  await tab.close()
}, 60_000)
