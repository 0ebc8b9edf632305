import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp, signUp } from '../support/browser.ts'
import type { TestApp } from '../support/test-app.ts'

// Organizations in Debian's Chromium: rename one from the list (a refusal shown at the field, then
// the new name), then delete it after the confirmation page; its domains stay, in no organization
// (checked through the API). Screenshots go to tests/artifacts/.

const PASSWORD = 'correct horse battery staple'
const email = `browser-orgs-${Math.random().toString(36).slice(2, 8)}@example.com`

let served: ServedApp
let t: TestApp
let base: string
let chromium: BrowserSession

beforeAll(async () => {
  served = await servedApp()
  t = served.t
  base = served.base
  chromium = await browserSession({ viewport: { width: 1280, height: 800 } })
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await served?.close()
})

test('rename an organization, then delete it; its domains stay in the account', async () => {
  const page = await chromium.tab([base])
  await signUp(page, base, email, PASSWORD)
  const token = await t.tokenFor(email)
  const api = (method: string, path: string, body?: unknown) =>
    t.request(method, `/api/v1${path}`, { token, body })
  const acme = (await api('POST', '/organizations', { name: 'Acme Retail' })).body.data.id
  expect((await api('POST', '/organizations', { name: 'Beta Corp' })).status).toBe(201)
  for (const name of ['one.example', 'two.example'])
    expect((await api('POST', '/domains', { domain_name: name, organization_id: acme })).status).toBe(201)

  await page.goto(`${base}/organizations`)
  await page.getByRole('link', { name: 'Rename Acme Retail' }).click()
  await page.waitForURL(`${base}/organizations/${acme}/rename`)
  await checkAccessible(page)
  const name = page.getByLabel('New name')
  expect(await name.inputValue()).toBe('Acme Retail')
  await name.fill('beta corp')
  await page.getByRole('button', { name: 'Rename organization' }).click()
  expect(await page.getByRole('alert').textContent()).toContain(
    'An organization named "beta corp" already exists.',
  )
  expect(await name.getAttribute('aria-invalid')).toBe('true')
  await page.screenshot({ path: `${ARTIFACTS}dashboard-organization-rename.png`, fullPage: true })
  await name.fill('Acme Stores')
  await page.getByRole('button', { name: 'Rename organization' }).click()
  await page.waitForURL(`${base}/organizations?renamed=1`)
  expect(await page.getByRole('status').textContent()).toBe('The organization is renamed.')
  expect(await page.getByRole('link', { name: 'Acme Stores', exact: true }).count()).toBe(1)
  await page.screenshot({ path: `${ARTIFACTS}dashboard-organizations.png`, fullPage: true })

  await page.getByRole('link', { name: 'Delete Acme Stores' }).click()
  await page.waitForURL(`${base}/organizations/${acme}/delete`)
  await checkAccessible(page)
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Delete Acme Stores?')
  expect(await page.locator('main').textContent()).toContain('Its 2 domains stay in your account')
  await page.screenshot({ path: `${ARTIFACTS}dashboard-organization-delete.png`, fullPage: true })
  await page.getByRole('button', { name: 'Delete organization' }).click()
  await page.waitForURL(`${base}/organizations?deleted=1`)
  expect(await page.getByRole('status').textContent()).toContain('The organization is deleted.')
  expect(await page.getByRole('link', { name: 'Acme Stores', exact: true }).count()).toBe(0)
  await checkAccessible(page)

  for (const domain of ['one.example', 'two.example'])
    expect((await api('GET', `/domains/${domain}`)).body.data.organization_id).toBeNull()
  expect((await api('GET', `/organizations/${acme}`)).status).toBe(404)
  expect(chromium.problems).toEqual([])
}, 60_000)
