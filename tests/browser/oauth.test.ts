import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, servedApp } from '../support/browser.ts'
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts'

// "Continue with …" in Debian's Chromium: the dashboard on a real port sends the browser to a real
// OpenID provider (oidc-provider, its development login and consent pages), which sends it back
// logged in. Only loopback addresses are reached: the provider's pages import a web font, and that
// request is stopped here.

let idp: TestOidcProvider
let served: ServedApp
let base: string
let chromium: BrowserSession
const SECRET = 'browser test client secret'

beforeAll(async () => {
  // The provider is told the callback on the app's port, so it starts once that port is known.
  served = await servedApp(async (origin) => {
    idp = await startOidcProvider([
      { clientId: 'dw-browser', clientSecret: SECRET, redirectUri: `${origin}/login/oauth/oidc/callback` },
    ])
    return {
      OAUTH_OIDC_ISSUER: idp.issuer,
      OAUTH_OIDC_CLIENT_ID: 'dw-browser',
      OAUTH_OIDC_CLIENT_SECRET: SECRET,
      OAUTH_OIDC_NAME: 'Example SSO',
    }
  })
  base = served.base
  chromium = await browserSession()
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await idp?.close()
})

test('Continue with Example SSO: log in and consent at the provider, back on /domains, logged in', async () => {
  const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } })
  const outside: string[] = []
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.hostname === '127.0.0.1') return route.continue()
    outside.push(url.href)
    return route.abort()
  })
  const email = `sso-${Math.random().toString(36).slice(2, 8)}@example.com`
  idp.accounts.set('browser-user', { email, email_verified: true, name: 'Browser User' })
  const page = await context.newPage()

  await page.goto(`${base}/login?next=%2Freports`)
  await page.screenshot({ path: `${ARTIFACTS}dashboard-login-oauth.png`, fullPage: true })
  await page.getByRole('link', { name: 'Continue with Example SSO' }).click()
  await page.waitForURL(`${idp.issuer}/interaction/**`)
  await page.locator('input[name=login]').fill('browser-user')
  await page.locator('input[name=password]').fill('anything')
  await page.getByRole('button', { name: 'Sign-in' }).click()
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.waitForURL(`${base}/reports`)
  expect(await page.locator('header').textContent()).toContain(email)
  await page.goto(`${base}/domains`)
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Domains')

  // Logged out and back: the provider remembers the consent, and the same user comes back.
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.waitForURL(`${base}/login?logged_out=1`)
  await page.getByRole('link', { name: 'Continue with Example SSO' }).click()
  await page.waitForURL(`${base}/domains`)
  expect(await page.locator('header').textContent()).toContain(email)
  expect(outside.every((url) => url.startsWith('https://fonts.googleapis.com/'))).toBe(true)
  await context.close()
}, 60_000)

test('cancelling at the provider comes back to the login page with a message', async () => {
  const context = await chromium.browser.newContext()
  await context.route('**/*', (route) =>
    new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
  )
  const page = await context.newPage()
  await page.goto(`${base}/login`)
  await page.getByRole('link', { name: 'Continue with Example SSO' }).click()
  await page.waitForURL(`${idp.issuer}/interaction/**`)
  await page.getByRole('link', { name: /Cancel/ }).click()
  await page.waitForURL(`${base}/login/oauth/oidc/callback**`)
  expect(await page.getByRole('alert').textContent()).toContain('You did not allow dmarcwatch')
  await page.screenshot({ path: `${ARTIFACTS}dashboard-login-oauth-denied.png`, fullPage: true })
  await context.close()
}, 60_000)
