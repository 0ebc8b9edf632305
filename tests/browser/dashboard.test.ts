import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Server } from 'bun'
import type { Page } from 'playwright-core'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp } from '../support/browser.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import type { TestApp } from '../support/test-app.ts'

// The dashboard in Debian's Chromium: sign up, add a domain and read its status, create a token and
// use it against the API, log out and in; a form posted from another origin is refused; a session
// left alone for 30 days goes back to login. Screenshots of the main pages go to tests/artifacts/.

const PASSWORD = 'correct horse battery staple'
const email = `browser-${Math.random().toString(36).slice(2, 8)}@example.com`

let dns: DnsTestServer
let served: ServedApp
let t: TestApp
let attacker: Server<unknown>
let base: string
let chromium: BrowserSession
let attackForm = ''

beforeAll(async () => {
  dns = await startDnsServer({
    'scanme.example': [{ type: 'TXT', data: 'v=spf1 +all' }],
    '_dmarc.scanme.example': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  })
  served = await servedApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' })
  t = served.t
  base = served.base
  // Another origin (same site: another port of 127.0.0.1, so the Lax cookie does go along).
  attacker = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => new Response(attackForm, { headers: { 'content-type': 'text/html' } }),
  })
  chromium = await browserSession({ viewport: { width: 1280, height: 800 } })
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await served?.close()
  attacker?.stop(true)
  await dns?.stop()
})

/** A tab that may reach the service and the attacker's origin, and nothing else (recordProblems). */
const tab = () => chromium.tab([base, `http://127.0.0.1:${attacker.port}`])

async function layoutShift(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let total = 0
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) total += (entry as unknown as { value: number }).value
        }).observe({ type: 'layout-shift', buffered: true })
        setTimeout(() => resolve(total), 200)
      }),
  )
}

test('sign up, add a domain, read its status, create and use a token, log out and in', async () => {
  const page = await tab()
  await page.goto(`${base}/`)
  expect(new URL(page.url()).pathname).toBe('/login')
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}dashboard-login.png`, fullPage: true })

  await page.getByRole('link', { name: 'Sign up' }).click()
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign up' }).click()
  await page.waitForURL(`${base}/domains`)
  await checkAccessible(page)
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Domains')

  await page.getByLabel('Domain').fill('scanme.example')
  await page.getByRole('button', { name: 'Add domain' }).click()
  await page.waitForURL(`${base}/domains/scanme.example?added=1`)
  await checkAccessible(page)
  expect(await page.getByLabel('Grade F').first().isVisible()).toBe(true)
  const body = await page.locator('main').textContent()
  expect(body).toContain('Publish this DNS record')
  expect(body).toContain('_dmarc.scanme.example')
  expect(body).toContain('_dmarcwatch.scanme.example')
  expect(await layoutShift(page)).toBeLessThan(0.01)
  await page.screenshot({ path: `${ARTIFACTS}dashboard-domain-status.png`, fullPage: true })

  await page.getByRole('link', { name: '← Domains' }).click()
  expect(await page.locator('tbody tr').count()).toBe(1)
  expect(await page.locator('tbody').textContent()).toContain('p=none')
  await page.screenshot({ path: `${ARTIFACTS}dashboard-domains.png`, fullPage: true })

  await page.getByRole('link', { name: 'API access' }).click()
  await page.getByLabel('Token name').fill('browser test')
  await page.getByLabel('Expires').selectOption('30')
  await page.getByRole('button', { name: 'Create token' }).click()
  const token = (await page.locator('#token-value').textContent())!.trim()
  expect(token).toMatch(/^dw_[a-z2-7]{32}$/)
  await chromium.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const copy = page.locator('button[data-copy="token-value"]')
  await copy.click()
  // app.js changes the label once the clipboard write settles (asynchronously): wait for it.
  await page.waitForFunction(() =>
    /^(Copied|Press Ctrl\+C)$/.test(
      document.querySelector('button[data-copy="token-value"]')?.textContent ?? '',
    ),
  )
  expect(['Copied', 'Press Ctrl+C']).toContain((await copy.textContent())!)
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}dashboard-settings-api.png`, fullPage: true })
  const api = await fetch(`${base}/api/v1/domains`, { headers: { authorization: `Bearer ${token}` } })
  expect(api.status).toBe(200)
  expect(((await api.json()) as { data: { name: string }[] }).data.map((d) => d.name)).toEqual([
    'scanme.example',
  ])

  await page.getByRole('link', { name: 'Account' }).click()
  // PUBLIC_URL's host here is an address, which names no mail domain: localhost stands in.
  expect(await page.locator('#report-address').textContent()).toMatch(/^r[a-z2-7]+@localhost$/)
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}dashboard-settings-account.png`, fullPage: true })

  await page.getByRole('button', { name: 'Log out', exact: true }).click()
  await page.waitForURL(`${base}/login?logged_out=1`)
  expect(await page.getByRole('status').textContent()).toContain('You are logged out.')
  await page.goto(`${base}/domains/scanme.example`)
  expect(page.url()).toBe(`${base}/login?next=%2Fdomains%2Fscanme.example`)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill('a wrong password')
  await page.getByRole('button', { name: 'Log in' }).click()
  expect(await page.getByRole('alert').textContent()).toContain('Wrong email or password.')
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.waitForURL(`${base}/domains/scanme.example`)
  await page.close()
  expect(chromium.problems).toEqual([])
}, 90_000)

test('a form posted to the dashboard from another origin is refused', async () => {
  const page = await tab()
  await page.goto(`${base}/settings/account`)
  // Even with the session's CSRF token (as if it had leaked), the foreign Origin alone refuses it.
  const leaked = await page.locator('input[name=_csrf]').first().inputValue()
  for (const csrf of ['', leaked]) {
    attackForm = `<!doctype html><html><body>
<form id="f" method="post" action="${base}/domains">
<input name="_csrf" value="${csrf}"><input name="domain_name" value="attacker.example">
</form><script>document.getElementById('f').submit()</script></body></html>`
    const refused = page.waitForResponse(
      (r) => r.url() === `${base}/domains` && r.request().method() === 'POST',
    )
    await page.goto(`http://127.0.0.1:${attacker.port}/`)
    const answer = await refused
    expect(answer.status()).toBe(403)
    await page.waitForLoadState()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Request refused')
  }
  await page.screenshot({ path: `${ARTIFACTS}dashboard-csrf-refused.png`, fullPage: true })
  await page.goto(`${base}/domains`)
  expect(await page.locator('tbody').textContent()).not.toContain('attacker.example')
  await page.close()
}, 60_000)

test('a session left alone for 30 days goes back to login, then to the page asked for', async () => {
  const page = await tab()
  await page.goto(`${base}/settings/api`)
  expect(new URL(page.url()).pathname).toBe('/settings/api')
  t.clock.now = new Date(Date.now() + 31 * 86_400_000)
  try {
    await page.goto(`${base}/settings/api`)
    expect(page.url()).toBe(`${base}/login?next=%2Fsettings%2Fapi`)
    const cookies = await chromium.context.cookies(base)
    expect(cookies.find((c) => c.name === 'dw_session')).toBeUndefined()
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.waitForURL(`${base}/settings/api`)
    const session = (await chromium.context.cookies(base)).find((c) => c.name === 'dw_session')!
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' })
  } finally {
    t.clock.now = new Date()
  }
  await page.close()
}, 60_000)
