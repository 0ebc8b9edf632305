import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AlertCandidate } from '../../domain/alerts/alert.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { stores } from '../../src/compose.ts'
import { startWorkers } from '../../src/worker.ts'
import { type SmtpReceiver, startSmtpReceiver } from '../support/smtp-receiver.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Alert emails through a real SMTP server on loopback (docs/notifications.md "Mail"): the whole app
// with its worker; alerts are opened through the alert store, so their `alert.created` events take
// the real path (outbox → relay → the account's debounced mail job → one send job per recipient).
// ALERT_MAIL_INTERVAL_SECONDS is 3 here, so a second burst does not wait 5 minutes.

const INGEST_DOMAIN = 'reports.dmarcwatch.test'
const INTERVAL = 3

let t: TestApp
let smtp: SmtpReceiver

beforeAll(async () => {
  smtp = await startSmtpReceiver()
  t = await startTestApp(
    {
      MAIL_SMTP_URL: smtp.url,
      ALERT_MAIL_INTERVAL_SECONDS: String(INTERVAL),
      INGEST_DOMAIN,
      PUBLIC_URL: 'http://dmarcwatch.test',
      RATE_LIMIT_API_PER_MINUTE: '10000',
    },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
}, 60_000)
afterAll(async () => {
  await t?.close()
  await smtp?.stop()
})

let alertCount = 0
const candidate = (severity: AlertCandidate['severity'] = 'high'): AlertCandidate => ({
  type: 'webhook_delivery_failing',
  subject: `s${++alertCount}`,
  severity,
  title: `Webhook deliveries failing #${alertCount}`,
  details: {
    evidence: { failed_deliveries: 12, last_status: 503 },
    remedy: 'Check that the receiver answers 2xx.',
    fix: { type: 'TXT', name: '_dmarc.example.com', value: 'v=DMARC1; p=none; rua=mailto:r@example.net' },
  },
})

async function openAlerts(account: TestAccount, ...candidates: AlertCandidate[]) {
  const alerts = stores(t.db.database).alerts
  await alerts.applyPlan(account.accountId, null, { create: candidates, update: [], resolve: [] }, new Date())
}

async function settings(account: TestAccount, recipients: string[], minSeverity = 'low', enabled = true) {
  const res = await t.request('PUT', '/api/v1/notifications', {
    token: account.token,
    body: {
      alert_email: { enabled, min_severity: minSeverity, recipients },
      digest: { frequency: 'off', recipients: [], time_zone: 'UTC' },
      slack: { webhook_url: null, min_severity: 'high' },
      teams: { webhook_url: null, min_severity: 'high' },
    },
  })
  expect(res.status).toBe(200)
}

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.org`

describe('alert emails', () => {
  test('within 2 minutes of the alert, with RFC 8058 and RFC 3834 headers; a one-click POST unsubscribes', async () => {
    const account = await t.account()
    const [first, second] = [unique('first'), unique('second')]
    await settings(account, [first, second])
    const started = Date.now()
    await openAlerts(account, candidate('high'))
    const [mail] = await smtp.waitFor(first, 1, 120_000)
    expect(Date.now() - started).toBeLessThan(120_000)

    expect(mail!.header('auto-submitted')).toBe('auto-generated')
    expect(mail!.header('message-id')).toMatch(
      new RegExp(`^<[0-9a-f]+@${INGEST_DOMAIN.replaceAll('.', '\\.')}>$`),
    )
    expect(mail!.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click')
    const unsubscribe = mail!
      .header('list-unsubscribe')
      .match(/^<(http:\/\/dmarcwatch\.test\/unsubscribe\/[\w-]{43})>$/)?.[1]
    expect(unsubscribe).toBeDefined()
    // Evidence, remedy, the record to publish and the link, in both parts.
    for (const part of [mail!.parsed.text ?? '', mail!.parsed.html || '']) {
      expect(part).toContain('Webhook deliveries failing')
      expect(part).toContain('Check that the receiver answers 2xx.')
      expect(part).toContain('v=DMARC1; p=none; rua=mailto:r@example.net')
      expect(part).toContain('failed_deliveries')
      expect(part).toMatch(/http:\/\/dmarcwatch\.test\/alerts\/\d+\b/)
    }
    // Each recipient has a URL of its own.
    const [other] = await smtp.waitFor(second, 1)
    expect(other!.header('list-unsubscribe')).not.toBe(mail!.header('list-unsubscribe'))

    const path = new URL(unsubscribe!).pathname
    // A GET (a scanner prefetching the link) only shows the button.
    const page = await t.request('GET', path)
    expect(page.status).toBe(200)
    expect(String(page.body)).toContain('name="List-Unsubscribe" value="One-Click"')
    const suppressed = async () =>
      rowsOf<{ n: number }>(
        await t.db.database.db.execute(
          sql`select count(*)::int as n from mail_suppressions where account_id = ${account.accountId} and recipient = ${first}`,
        ),
      )[0]!.n
    expect(await suppressed()).toBe(0)
    // The one-click POST, as a mail provider sends it (RFC 8058 §3.1).
    const posted = await t.app.handle(
      new Request(`http://dmarcwatch.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      }),
    )
    expect(posted.status).toBe(200)
    expect(await suppressed()).toBe(1)

    // The next alert reaches the other recipient only.
    await Bun.sleep(INTERVAL * 1000)
    await openAlerts(account, candidate('critical'))
    await smtp.waitFor(second, 2, 60_000)
    await Bun.sleep(1000)
    expect(smtp.to(first)).toHaveLength(1)

    // The account sees the suppression and lifts it: the next alert reaches the address again.
    const listed = await t.request('GET', '/api/v1/notifications/suppressions', { token: account.token })
    expect(listed.body).toMatchObject({
      data: [{ recipient: first, kind: 'alerts', reason: 'unsubscribed', detail: null }],
      meta: { total: 1 },
    })
    const lifted = await t.request(
      'DELETE',
      `/api/v1/notifications/suppressions/${encodeURIComponent(first)}`,
      {
        token: account.token,
      },
    )
    expect(lifted.body).toEqual({ data: { lifted: 1 } })
    expect(await suppressed()).toBe(0)
    await Bun.sleep(INTERVAL * 1000)
    await openAlerts(account, candidate('critical'))
    await smtp.waitFor(first, 2, 60_000)
  }, 180_000)

  test('a burst of 3 alerts is one mail listing all three; below the threshold nothing is sent', async () => {
    const account = await t.account()
    const to = unique('burst')
    await settings(account, [to], 'medium')
    const burst = [candidate('high'), candidate('medium'), candidate('critical')]
    await openAlerts(account, ...burst, candidate('low'))
    const [mail] = await smtp.waitFor(to, 1, 60_000)
    expect(mail!.parsed.subject).toBe('[dmarcwatch] 3 new alerts')
    for (const alert of burst) expect(mail!.parsed.text).toContain(alert.title)
    await Bun.sleep((INTERVAL + 2) * 1000)
    expect(smtp.to(to)).toHaveLength(1)
    // Every change was taken: nothing waits to be mailed twice.
    const waiting = rowsOf<{ n: number }>(
      await t.db.database.db.execute(
        sql`select count(*)::int as n from alert_mail_queue where account_id = ${account.accountId} and mailed_at is null`,
      ),
    )[0]!.n
    expect(waiting).toBe(0)
  }, 60_000)

  test('recipients default to the account members; a resolved alert is mailed too', async () => {
    const account = await t.account()
    await settings(account, [])
    await openAlerts(account, candidate('high'))
    await smtp.waitFor(account.email, 1, 60_000)
    const open = await t.request('GET', '/api/v1/alerts?status=open', { token: account.token })
    const id = open.body.data[0].alert_id as string
    await Bun.sleep(INTERVAL * 1000)
    expect((await t.request('POST', `/api/v1/alerts/${id}/resolve`, { token: account.token })).status).toBe(
      200,
    )
    const mails = await smtp.waitFor(account.email, 2, 60_000)
    expect(mails[1]!.parsed.subject).toStartWith('[dmarcwatch] Resolved:')
  }, 60_000)

  test('a 5xx at RCPT TO suppresses the address for every kind; others still get mail', async () => {
    const account = await t.account()
    const [bad, good] = [unique('gone'), unique('good')]
    smtp.refused.add(bad)
    await settings(account, [bad, good])
    await openAlerts(account, candidate('high'))
    await smtp.waitFor(good, 1, 60_000)
    const deadline = Date.now() + 30_000
    let rows: { kind: string; reason: string; detail: string }[] = []
    while (Date.now() < deadline && rows.length === 0) {
      rows = rowsOf(
        await t.db.database.db.execute(
          sql`select kind, reason, detail from mail_suppressions where account_id = ${account.accountId} and recipient = ${bad}`,
        ),
      )
      await Bun.sleep(100)
    }
    expect(rows).toEqual([{ kind: 'all', reason: 'bounced', detail: expect.stringContaining('550') }])
    await Bun.sleep(INTERVAL * 1000)
    await openAlerts(account, candidate('high'))
    await smtp.waitFor(good, 2, 60_000)
    await Bun.sleep(1000)
    expect(smtp.refusals.filter((r) => r === bad)).toHaveLength(1)
  }, 120_000)

  test('POST /notifications/test {channel: email} sends a test to the alert recipients now', async () => {
    const account = await t.account()
    const to = unique('test')
    await settings(account, [to])
    const res = await t.request('POST', '/api/v1/notifications/test', {
      token: account.token,
      body: { channel: 'email' },
    })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ channel: 'email', status: 'delivered', recipients: [to] })
    const [mail] = await smtp.waitFor(to, 1, 5_000)
    expect(mail!.parsed.subject).toBe('[dmarcwatch] Test email')
    expect(mail!.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click')
  })

  test('alert emails off: nothing is mailed, nor later when turned back on; the next alert is', async () => {
    const account = await t.account()
    const to = unique('off')
    await settings(account, [to], 'low', false)
    const quiet = candidate('critical')
    await openAlerts(account, quiet)
    // The job ran and took the change (marked, no mail): the queue has nothing waiting.
    const counts = async () =>
      rowsOf<{ queued: number; waiting: number }>(
        await t.db.database.db.execute(
          sql`select count(*)::int as queued, count(*) filter (where mailed_at is null)::int as waiting
              from alert_mail_queue where account_id = ${account.accountId}`,
        ),
      )[0]!
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      const { queued, waiting } = await counts()
      if (queued === 1 && waiting === 0) break
      await Bun.sleep(100)
    }
    expect(await counts()).toEqual({ queued: 1, waiting: 0 })
    // Long enough for a send job the burst would have enqueued to reach the receiver.
    await Bun.sleep(INTERVAL * 1000)
    expect(smtp.to(to)).toHaveLength(0)

    // The test email is an explicit request: sent while alert emails are off.
    const test = await t.request('POST', '/api/v1/notifications/test', {
      token: account.token,
      body: { channel: 'email' },
    })
    expect(test.body.data).toMatchObject({ status: 'delivered', recipients: [to] })
    const [trial] = await smtp.waitFor(to, 1, 5_000)
    expect(trial!.parsed.subject).toBe('[dmarcwatch] Test email')

    // Back on: the alert of the off time stays unmailed; a new one is mailed alone.
    await settings(account, [to], 'low', true)
    await Bun.sleep(INTERVAL * 1000)
    const fresh = candidate('high')
    await openAlerts(account, fresh)
    const mails = await smtp.waitFor(to, 2, 60_000)
    expect(mails[1]!.parsed.subject).toBe(`[dmarcwatch] HIGH: ${fresh.title}`)
    expect(mails[1]!.parsed.text).toContain(fresh.title)
    // One alert in the subject, and the quiet one nowhere (its title ends its headline line).
    expect(mails[1]!.parsed.text).not.toContain(`${quiet.title}\n`)
    await Bun.sleep((INTERVAL + 2) * 1000)
    expect(smtp.to(to)).toHaveLength(2)
  }, 120_000)

  test('/unsubscribe: an unknown or malformed token is 404; a POST without the one-click body is 400', async () => {
    const post = (path: string, body: string) =>
      t.app.handle(
        new Request(`http://dmarcwatch.test${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        }),
      )
    const unknown = `/unsubscribe/${'A'.repeat(43)}`
    expect((await t.request('GET', unknown)).status).toBe(404)
    expect((await t.request('GET', '/unsubscribe/short')).status).toBe(404)
    expect((await post(unknown, 'List-Unsubscribe=One-Click')).status).toBe(404)
    expect((await post(unknown, 'confirm=yes')).status).toBe(400)
  })
})
