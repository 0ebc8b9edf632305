import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ChatReceiver, startSlackReceiver } from '../support/chat-receivers.ts'
import { startSmtpReceiver } from '../support/smtp-receiver.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { type FormClient, formClient } from './client.ts'

// Settings → Notifications (docs/notifications.md): the form saves what the API reads, refuses what
// the API refuses (at the field), never shows a chat URL in full, needs the CSRF token, and its test
// buttons answer on the page.

let t: TestApp
let client: FormClient
let email: string
let slack: ChatReceiver

const PAGE = '/settings/notifications'
const base = {
  alert_enabled: '1',
  alert_min_severity: 'medium',
  alert_recipients: '',
  digest_frequency: 'weekly',
  digest_recipients: '',
  digest_time_zone: 'UTC',
  slack_webhook_url: '',
  slack_min_severity: 'high',
  teams_webhook_url: '',
  teams_min_severity: 'high',
}

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1' })
  slack = startSlackReceiver()
  client = formClient(t)
  email = `notify-${Math.random().toString(36).slice(2, 8)}@example.com`
  await client.signUp(email)
}, 60_000)
afterAll(async () => {
  await t.close()
  await slack.stop()
})

const apiSettings = async () =>
  (await t.request('GET', '/api/v1/notifications', { token: await t.tokenFor(email) })).body.data

describe('notification settings page', () => {
  test('linked from the navigation; the defaults shown', async () => {
    const page = await client.get('/settings/api')
    expect(page.html).toContain('<a href="/settings/notifications">Notifications</a>')
    const own = await client.get(PAGE)
    expect(own.status).toBe(200)
    expect(own.html).toContain('<h1>Notifications</h1>')
    expect(own.html).toContain('<option value="medium" selected>medium</option>')
    expect(own.html).toContain('value="UTC"')
    expect(own.html).toMatch(
      /<input type="checkbox" id="alert_enabled" name="alert_enabled" value="1"[^>]* checked>/,
    )
    expect(own.html).toContain('No message sent yet.')
  })

  test('saving stores what the API reads; the URL is shown masked and kept when the field is empty', async () => {
    const saved = await client.submit(PAGE, {
      ...base,
      alert_min_severity: 'high',
      alert_recipients: 'Ops@Example.com\nsecurity@example.com',
      digest_frequency: 'daily',
      digest_time_zone: 'Europe/Paris',
      slack_webhook_url: `${slack.url}?token=verySecretXyZ9`,
      slack_min_severity: 'critical',
    })
    expect(saved.status).toBe(303)
    expect(saved.location).toBe('/settings/notifications?saved=1')
    const page = await client.get(saved.location!)
    expect(page.html).toContain('Notification settings saved.')
    expect(page.html).toContain(`<code>http://127.0.0.1:${new URL(slack.url).port}/…XyZ9</code>`)
    expect(page.html).not.toContain('verySecret')
    expect(await apiSettings()).toMatchObject({
      alert_email: {
        enabled: true,
        min_severity: 'high',
        recipients: ['ops@example.com', 'security@example.com'],
      },
      digest: { frequency: 'daily', time_zone: 'Europe/Paris' },
      slack: { min_severity: 'critical', webhook_url: expect.stringContaining('XyZ9') },
      teams: { webhook_url: null },
    })
    // The form again without a URL keeps it.
    await client.submit(PAGE, { ...base, slack_min_severity: 'low' })
    expect((await apiSettings()).slack).toMatchObject({
      min_severity: 'low',
      webhook_url: expect.stringContaining('XyZ9'),
    })
  })

  test('the send-test button posts to Slack and shows the outcome and the last delivery', async () => {
    const answer = await client.submit(PAGE, { channel: 'slack' }, '/settings/notifications/test')
    expect(answer.status).toBe(200)
    expect(answer.html).toContain('Test message to Slack: delivered (HTTP 200).')
    expect(slack.arrivals.at(-1)!.problems).toEqual([])
    expect(answer.html).toContain('Last message: test')
    const email = await client.submit(PAGE, { channel: 'email' }, '/settings/notifications/test')
    // This app has no MAIL_SMTP_URL: mails would only be logged (docs/notifications.md "Mail").
    expect(email.html).toContain('No test email sent: MAIL_SMTP_URL is not set')
  })

  test('refusals at the field, with the API’s messages, and nothing saved', async () => {
    const before = await apiSettings()
    const answer = await client.submit(PAGE, {
      ...base,
      alert_recipients: 'not-an-address',
      digest_time_zone: 'Nowhere/Special',
    })
    expect(answer.status).toBe(400)
    expect(answer.html).toContain('There is a problem')
    expect(answer.html).toContain('id="alert_recipients-error"')
    expect(answer.html).toContain('not-an-address')
    const zone = await client.submit(PAGE, { ...base, digest_time_zone: 'Nowhere/Special' })
    expect(zone.html).toContain('id="digest_time_zone-error"')
    const url = await client.submit(PAGE, { ...base, teams_webhook_url: 'ftp://example.com/x' })
    expect(url.status).toBe(400)
    expect(url.html).toContain('id="teams_webhook_url-error"')
    expect(url.html).toContain('must use https')
    expect(await apiSettings()).toEqual(before)
  })

  test('the alert email box unticked turns alert emails off; ticked again, on', async () => {
    const { alert_enabled: _, ...unticked } = base
    expect((await client.submit(PAGE, { ...unticked, alert_min_severity: 'high' })).status).toBe(303)
    expect((await apiSettings()).alert_email).toMatchObject({ enabled: false, min_severity: 'high' })
    const page = await client.get(PAGE)
    expect(page.html).toMatch(
      /<input type="checkbox" id="alert_enabled" name="alert_enabled" value="1"[^>]*>/,
    )
    expect(page.html).not.toMatch(/id="alert_enabled"[^>]* checked/)
    // A refused form comes back with the box as posted (unticked), not as saved.
    const refused = await client.submit(PAGE, { ...unticked, digest_time_zone: 'Nowhere/Special' })
    expect(refused.status).toBe(400)
    expect(refused.html).not.toMatch(/id="alert_enabled"[^>]* checked/)
    // The test email is still sent while off (an explicit request); the page says mail is off.
    const smtp = await startSmtpReceiver()
    const mailing = await startTestApp({ MAIL_SMTP_URL: smtp.url }, { db: t.db })
    try {
      const other = formClient(mailing)
      const address = `off-${Math.random().toString(36).slice(2, 8)}@example.com`
      await other.signUp(address)
      await other.submit(PAGE, { ...unticked, alert_recipients: address })
      const test = await other.submit(PAGE, { channel: 'email' }, '/settings/notifications/test')
      expect(test.html).toContain(`Test email delivered (${address}: accepted) to ${address}.`)
      expect(test.html).toContain('Alert emails are off: only this test was sent.')
      expect(await smtp.waitFor(address, 1, 5_000)).toHaveLength(1)
    } finally {
      await mailing.close()
      await smtp.stop()
    }
    await client.submit(PAGE, base)
    expect((await apiSettings()).alert_email.enabled).toBe(true)
    expect((await client.get(PAGE)).html).toMatch(/id="alert_enabled"[^>]* checked/)
  })

  test('turning a channel off forgets its URL', async () => {
    await client.submit(PAGE, { ...base, slack_off: '1' })
    expect((await apiSettings()).slack.webhook_url).toBeNull()
  })

  test('without the CSRF token or from another origin: refused', async () => {
    expect((await client.post(PAGE, { ...base })).status).toBe(403)
    const page = await client.get(PAGE)
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!
    expect(
      (await client.post(PAGE, { _csrf: csrf, ...base }, { origin: 'https://evil.example' })).status,
    ).toBe(403)
  })
})

describe('addresses not mailed', () => {
  const accountOf = async () => {
    const token = await t.tokenFor(email)
    const { stores } = await import('../../src/compose.ts')
    const { rowsOf } = await import('../../infrastructure/db/database.ts')
    const { sql } = await import('drizzle-orm')
    const [row] = rowsOf<{ id: string }>(
      await t.db.database.db.execute(
        sql`select m.account_id as id from memberships m join users u on u.id = m.user_id where u.email = ${email}`,
      ),
    )
    return { token, accountId: row!.id, suppressions: stores(t.db.database).mailSuppressions, sql }
  }

  test('none at first; then listed with why, and "Mail again" lifts one (CSRF required)', async () => {
    expect((await client.get(PAGE)).html).toContain('None: every recipient is mailed.')
    const { accountId, suppressions, sql } = await accountOf()
    await suppressions.bounced(
      accountId,
      'gone@example.org',
      '550 5.1.1 <gone@example.org>: no such user',
      new Date(),
    )
    await t.db.database.db.execute(sql`insert into mail_suppressions (account_id, recipient, kind, reason, at)
      values (${accountId}, 'reader@example.org', 'digest', 'unsubscribed', now())`)
    const page = await client.get(PAGE)
    expect(page.html).toContain(
      '<td>gone@example.org</td><td>Every mail</td><td>Bounced <span class="muted">(550 5.1.1 &lt;gone@example.org&gt;: no such user)</span></td>',
    )
    expect(page.html).toContain('<td>reader@example.org</td><td>Digest</td><td>Unsubscribed</td>')
    const action = '/settings/notifications/suppressions'
    // Without the token: refused, nothing lifted.
    expect((await client.post(action, { address: 'gone@example.org', kind: 'all' })).status).toBe(403)
    expect(await suppressions.isSuppressed(accountId, 'gone@example.org', 'alerts')).toBe(true)
    const lifted = await client.submit(PAGE, { address: 'gone@example.org', kind: 'all' }, action)
    expect(lifted.status).toBe(200)
    expect(lifted.html).toContain('gone@example.org will be mailed again.')
    expect(lifted.html).not.toContain('<td>gone@example.org</td>')
    expect(await suppressions.isSuppressed(accountId, 'gone@example.org', 'alerts')).toBe(false)
    expect(await suppressions.isSuppressed(accountId, 'reader@example.org', 'digest')).toBe(true)
    // Again, or a kind it does not have, or a forged kind: nothing lifted, said on the page.
    expect((await client.submit(PAGE, { address: 'gone@example.org', kind: 'all' }, action)).status).toBe(404)
    expect(
      (await client.submit(PAGE, { address: 'reader@example.org', kind: 'alerts' }, action)).status,
    ).toBe(404)
    expect(
      (await client.submit(PAGE, { address: 'reader@example.org', kind: 'everything' }, action)).status,
    ).toBe(400)
    const control = await client.submit(PAGE, { address: 'reader\u0000@example.org', kind: 'digest' }, action)
    expect(control.status).toBe(400)
    expect(await suppressions.isSuppressed(accountId, 'reader@example.org', 'digest')).toBe(true)
  })
})
