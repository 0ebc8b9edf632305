import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { notificationSettings } from '../../infrastructure/db/schema/notifications.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Notification settings through the API (docs/notifications.md): defaults, validation, chat URLs
// checked like webhook URLs, sealed at rest and answered masked, and one account's settings unseen
// by another.

let t: TestApp
let dns: DnsTestServer

const api = (method: string, account: TestAccount, body?: unknown) =>
  t.request(method, '/api/v1/notifications', { token: account.token, body })

const SLACK = 'https://127.0.0.1:9/services/T000/B000/secretTokenAbCd'
const TEAMS = 'https://127.0.0.1:9/workflows/abc/triggers/manual/paths/invoke?sig=teamsSigWxYz'

beforeAll(async () => {
  dns = await startDnsServer({
    'internal.example': [{ type: 'A', data: '10.0.0.5' }],
    'public.example': [{ type: 'A', data: '93.184.215.14' }],
  })
  t = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE: '1',
    RATE_LIMIT_API_PER_MINUTE: '10000',
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
  })
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

describe('notification settings', () => {
  test('the defaults until a save: alert mail from medium to every member, weekly digest in UTC, chat off', async () => {
    const account = await t.account()
    const res = await api('GET', account)
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({
      alert_email: { enabled: true, min_severity: 'medium', recipients: [] },
      digest: { frequency: 'weekly', recipients: [], time_zone: 'UTC' },
      slack: { webhook_url: null, min_severity: 'high', last_delivery: null },
      teams: { webhook_url: null, min_severity: 'high', last_delivery: null },
    })
  })

  test('a save is answered and read back; recipients normalised; chat URLs masked, sealed at rest', async () => {
    const account = await t.account()
    const res = await api('PUT', account, {
      alert_email: {
        min_severity: 'high',
        recipients: ['Ops@Example.com', 'ops@example.com ', 'b@example.org'],
      },
      digest: { frequency: 'daily', recipients: [], time_zone: 'Europe/Paris' },
      slack: { webhook_url: SLACK, min_severity: 'critical' },
      teams: { webhook_url: TEAMS, min_severity: 'low' },
    })
    expect(res.status).toBe(200)
    const expected = {
      alert_email: { enabled: true, min_severity: 'high', recipients: ['ops@example.com', 'b@example.org'] },
      digest: { frequency: 'daily', recipients: [], time_zone: 'Europe/Paris' },
      slack: { webhook_url: 'https://127.0.0.1:9/…AbCd', min_severity: 'critical', last_delivery: null },
      teams: { webhook_url: 'https://127.0.0.1:9/…WxYz', min_severity: 'low', last_delivery: null },
    }
    expect(res.body.data).toEqual(expected)
    expect((await api('GET', account)).body.data).toEqual(expected)
    const text = JSON.stringify((await api('GET', account)).body)
    expect(text).not.toContain('secretToken')
    expect(text).not.toContain('teamsSig')

    const [row] = await t.db.database.db
      .select()
      .from(notificationSettings)
      .where(eq(notificationSettings.accountId, account.accountId))
    expect(row!.slackUrlSealed).toStartWith('v1.')
    expect(JSON.stringify(row)).not.toContain('secretToken')
    // The store opens them for sending.
    const stored = await t.runtime.secrets.open(
      row!.slackUrlSealed!,
      `notification:slack:${account.accountId}`,
    )
    expect(stored).toBe(SLACK)
  })

  test('a section left out is kept; a chat URL left out is kept, null turns the channel off', async () => {
    const account = await t.account()
    await api('PUT', account, { slack: { webhook_url: SLACK, min_severity: 'high' } })
    const changed = await api('PUT', account, {
      slack: { min_severity: 'info' },
      digest: { frequency: 'off', recipients: ['a@example.com'], time_zone: 'America/New_York' },
    })
    expect(changed.body.data.slack).toEqual({
      webhook_url: 'https://127.0.0.1:9/…AbCd',
      min_severity: 'info',
      last_delivery: null,
    })
    expect(changed.body.data.alert_email).toEqual({ enabled: true, min_severity: 'medium', recipients: [] })
    expect(changed.body.data.digest.time_zone).toBe('America/New_York')
    const off = await api('PUT', account, { slack: { webhook_url: null, min_severity: 'info' } })
    expect(off.body.data.slack).toEqual({ webhook_url: null, min_severity: 'info', last_delivery: null })
  })

  test('alert emails turn off and on; `enabled` left out keeps the saved switch', async () => {
    const account = await t.account()
    const off = await api('PUT', account, {
      alert_email: { enabled: false, min_severity: 'high', recipients: ['ops@example.com'] },
    })
    expect(off.status).toBe(200)
    const saved = { enabled: false, min_severity: 'high', recipients: ['ops@example.com'] }
    expect(off.body.data.alert_email).toEqual(saved)
    expect((await api('GET', account)).body.data.alert_email).toEqual(saved)
    // A client that predates the switch sends the section without it: mail stays off.
    const kept = await api('PUT', account, { alert_email: { min_severity: 'low', recipients: [] } })
    expect(kept.body.data.alert_email).toEqual({ enabled: false, min_severity: 'low', recipients: [] })
    // Another section saved alone leaves it too.
    await api('PUT', account, { digest: { frequency: 'off', recipients: [], time_zone: 'UTC' } })
    expect((await api('GET', account)).body.data.alert_email.enabled).toBe(false)
    const on = await api('PUT', account, {
      alert_email: { enabled: true, min_severity: 'low', recipients: [] },
    })
    expect(on.body.data.alert_email).toEqual({ enabled: true, min_severity: 'low', recipients: [] })
    expect((await api('GET', account)).body.data.alert_email.enabled).toBe(true)
  })

  test('a document saved before the switch existed reads as alert emails on', async () => {
    const account = await t.account()
    await api('PUT', account, { alert_email: { min_severity: 'critical', recipients: ['a@example.com'] } })
    // The document as an earlier version wrote it: alertEmail without `enabled`.
    await t.db.database.db
      .update(notificationSettings)
      .set({
        settings: {
          alertEmail: { minSeverity: 'critical', recipients: ['a@example.com'] },
          digest: { frequency: 'daily', recipients: [], timeZone: 'UTC' },
          slack: { minSeverity: 'high' },
          teams: { minSeverity: 'high' },
        },
      })
      .where(eq(notificationSettings.accountId, account.accountId))
    const [row] = await t.db.database.db
      .select()
      .from(notificationSettings)
      .where(eq(notificationSettings.accountId, account.accountId))
    expect(JSON.stringify(row!.settings)).not.toContain('enabled')
    expect((await api('GET', account)).body.data.alert_email).toEqual({
      enabled: true,
      min_severity: 'critical',
      recipients: ['a@example.com'],
    })
    expect((await api('GET', account)).body.data.digest.frequency).toBe('daily')
  })

  test('validation names the field', async () => {
    const account = await t.account()
    const refused = async (body: unknown, field: string) => {
      const res = await api('PUT', account, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.errors[field], JSON.stringify(res.body)).toBeArray()
    }
    await refused(
      { alert_email: { min_severity: 'medium', recipients: ['not-an-email'] } },
      'alert_email.recipients',
    )
    await refused(
      { digest: { frequency: 'weekly', recipients: [], time_zone: 'Mars/Olympus_Mons' } },
      'digest.time_zone',
    )
    await refused(
      { slack: { webhook_url: 'ftp://example.com/x', min_severity: 'high' } },
      'slack.webhook_url',
    )
    await refused({ teams: { webhook_url: 'not a url', min_severity: 'high' } }, 'teams.webhook_url')
    await refused(
      { slack: { webhook_url: 'https://93.184.216.34:0/x', min_severity: 'high' } },
      'slack.webhook_url',
    )
    // Found by a hostile-input sweep: the old `x@y.z` pattern took these, the first stored with its
    // brackets, and Intl took an offset for a time zone.
    for (const address of [
      '<a@example.com>',
      'a..b@example.com',
      '.a@example.com',
      'a@-example.com',
      'a@example..com',
    ])
      await refused(
        { digest: { frequency: 'weekly', recipients: ['ok@example.com', address], time_zone: 'UTC' } },
        'digest.recipients',
      )
    for (const zone of ['+05:00', '-08:00'])
      await refused({ digest: { frequency: 'weekly', recipients: [], time_zone: zone } }, 'digest.time_zone')
    // Schema-level refusals: an unknown severity, too many recipients, an overlong URL.
    for (const body of [
      { alert_email: { min_severity: 'urgent', recipients: [] } },
      {
        alert_email: {
          min_severity: 'low',
          recipients: Array.from({ length: 21 }, (_, i) => `u${i}@example.com`),
        },
      },
      { slack: { webhook_url: `https://example.com/${'x'.repeat(2100)}`, min_severity: 'high' } },
      { alert_email: { enabled: 'no', min_severity: 'low', recipients: [] } },
      { alert_email: { enabled: null, min_severity: 'low', recipients: [] } },
    ]) {
      const res = await api('PUT', account, body)
      expect(res.status).toBe(400)
      expect(Object.keys(res.body.errors).length).toBeGreaterThan(0)
    }
    // Nothing of the refused bodies was saved.
    expect((await api('GET', account)).body.data.alert_email).toEqual({
      enabled: true,
      min_severity: 'medium',
      recipients: [],
    })
    expect((await api('GET', account)).body.data.digest).toEqual({
      frequency: 'weekly',
      recipients: [],
      time_zone: 'UTC',
    })
  })

  test('without WEBHOOK_ALLOW_PRIVATE chat URLs are https to public addresses only', async () => {
    const strict = await startTestApp(
      { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' },
      { db: t.db },
    )
    try {
      const account = await strict.account()
      const put = (channel: string, url: string) =>
        strict.request('PUT', '/api/v1/notifications', {
          token: account.token,
          body: { [channel]: { webhook_url: url, min_severity: 'high' } },
        })
      for (const url of [
        'http://public.example/hook',
        'https://127.0.0.1/hook',
        'https://10.1.2.3/hook',
        'https://[::1]/hook',
        'https://169.254.169.254/latest',
        'https://internal.example/hook',
      ])
        for (const channel of ['slack', 'teams']) {
          const res = await put(channel, url)
          expect(res.status, url).toBe(400)
          expect(res.body.errors[`${channel}.webhook_url`][0], url).toBeString()
        }
      const ok = await put('teams', 'https://public.example/workflows/x?sig=abcd1234')
      expect(ok.status).toBe(200)
      expect(ok.body.data.teams.webhook_url).toBe('https://public.example/…1234')
    } finally {
      await strict.close()
    }
  })

  test('one account never sees or changes another’s settings', async () => {
    const one = await t.account()
    const two = await t.account()
    await api('PUT', one, {
      alert_email: { min_severity: 'critical', recipients: ['one@example.com'] },
      slack: { webhook_url: SLACK, min_severity: 'high' },
    })
    const other = (await api('GET', two)).body.data
    expect(other.alert_email).toEqual({ enabled: true, min_severity: 'medium', recipients: [] })
    expect(other.slack.webhook_url).toBeNull()
    await api('PUT', two, { slack: { webhook_url: null, min_severity: 'low' } })
    expect((await api('GET', one)).body.data.slack).toEqual({
      webhook_url: 'https://127.0.0.1:9/…AbCd',
      min_severity: 'high',
      last_delivery: null,
    })
  })

  test('without a token: 401', async () => {
    expect((await t.request('GET', '/api/v1/notifications')).status).toBe(401)
  })
})
