import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp, signUp } from '../support/browser.ts'
import { type ChatReceiver, startSlackReceiver, startTeamsReceiver } from '../support/chat-receivers.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'

// In Debian's Chromium: Settings → Notifications from the navigation; recipients, digest time zone and
// Slack and Teams URLs saved and seen again (the URLs masked), a refused time zone shown at its field,
// and the Slack test button posting to a loopback receiver that checks the Slack shape, with the
// outcome and the last delivery on the page. Screenshots go to tests/artifacts/.

const PASSWORD = 'correct horse battery staple'
const email = `notify-browser-${Math.random().toString(36).slice(2, 8)}@example.com`

let dns: DnsTestServer
let served: ServedApp
let base: string
let chromium: BrowserSession
let slack: ChatReceiver
let teams: ChatReceiver

beforeAll(async () => {
  dns = await startDnsServer({})
  served = await servedApp({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
    // The receivers listen on loopback, which the URL check refuses otherwise.
    WEBHOOK_ALLOW_PRIVATE: '1',
  })
  base = served.base
  slack = startSlackReceiver()
  teams = startTeamsReceiver()
  chromium = await browserSession({ viewport: { width: 1280, height: 900 } })
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await served?.close()
  await slack?.stop()
  await teams?.stop()
  await dns?.stop()
}, 30_000)

test('save notification settings, see them again, send a Slack test', async () => {
  const page = await chromium.tab([base])
  await signUp(page, base, email, PASSWORD)
  await page.getByRole('link', { name: 'Notifications', exact: true }).click()
  await page.waitForURL(`${base}/settings/notifications`)
  await checkAccessible(page)
  expect(await page.getByRole('button', { name: 'Send test to Slack' }).isDisabled()).toBe(true)

  await page.getByLabel('Email alerts at or above').selectOption('high')
  await page.locator('#alert_recipients').fill('ops@example.com\nsecurity@example.com')
  await page.getByLabel('Frequency').selectOption('daily')
  await page.getByLabel('Time zone').fill('Europe/Paris')
  await page.getByLabel('Slack webhook URL').fill(`${slack.url}/T000/B000/slackSecretAb12`)
  await page.getByLabel('Microsoft Teams webhook URL').fill(`${teams.url}?sig=teamsSecretCd34`)
  await page.locator('#teams_min_severity').selectOption('critical')
  await page.getByRole('button', { name: 'Save notification settings' }).click()
  await page.waitForURL(`${base}/settings/notifications?saved=1`)
  expect(await page.getByRole('status').textContent()).toContain('Notification settings saved.')

  // Seen again on a fresh load: the values, and the URLs masked only.
  await page.goto(`${base}/settings/notifications`)
  expect(await page.getByLabel('Email alerts at or above').inputValue()).toBe('high')
  expect(await page.locator('#alert_recipients').inputValue()).toBe('ops@example.com\nsecurity@example.com')
  expect(await page.getByLabel('Frequency').inputValue()).toBe('daily')
  expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Paris')
  expect(await page.locator('#teams_min_severity').inputValue()).toBe('critical')
  const main = (await page.locator('main').textContent())!
  expect(main).toContain('/…Ab12')
  expect(main).toContain('/…Cd34')
  expect(await page.content()).not.toContain('slackSecret')
  expect(await page.getByLabel('Slack webhook URL').inputValue()).toBe('')
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}notifications-saved.png`, fullPage: true })

  // A time zone the runtime does not know is refused at its field; nothing changes.
  await page.getByLabel('Time zone').fill('Mars/Olympus_Mons')
  await page.getByRole('button', { name: 'Save notification settings' }).click()
  await page.locator('#digest_time_zone-error').waitFor({ state: 'visible' })
  expect(await page.locator('#digest_time_zone-error').textContent()).toContain('IANA time zone')
  await page.goto(`${base}/settings/notifications`)
  expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Paris')

  await page.getByRole('button', { name: 'Send test to Slack' }).click()
  await page.getByRole('status').waitFor({ state: 'visible' })
  expect(await page.getByRole('status').textContent()).toContain(
    'Test message to Slack: delivered (HTTP 200).',
  )
  expect(slack.arrivals).toHaveLength(1)
  expect(slack.arrivals[0]!.problems).toEqual([])
  expect(slack.arrivals[0]!.path).toBe('/hook/T000/B000/slackSecretAb12')
  expect(await page.locator('#slack .last-delivery').textContent()).toContain('Last message: test, delivered')
  await checkAccessible(page)
  await page.screenshot({ path: `${ARTIFACTS}notifications-tested.png`, fullPage: true })
  await page.close()
  expect(chromium.problems).toEqual([])
}, 90_000)
