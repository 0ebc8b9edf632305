import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { SCHEDULE_DIGESTS } from '../../infrastructure/queue/catalogue.ts'
import { startWorkers } from '../../src/worker.ts'
import { type SmtpReceiver, startSmtpReceiver } from '../support/smtp-receiver.ts'
import { reportXml } from '../support/source-reports.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// The digest (docs/notifications.md "Mail") for a seeded account: reports through the normal
// intake (POST /ingest/reports), the hourly scheduler's job sent by hand at a chosen time, and the
// mail read from a real SMTP server on loopback.
//
// The clock: Monday 2026-11-23 07:30 UTC, 08:30 in Paris, so the weekly digest of a Paris account
// is due. It covers 2026-11-16..22 against 2026-11-09..15:
//   current:  11-20  74.125.0.1 90 pass, 203.0.113.9 10 fail (new);  11-21  74.125.0.1 50 pass
//             → 150 messages, 93.3% pass
//   previous: 11-12  74.125.0.1 40 pass, 198.51.100.7 60 fail → 40.0% pass; change +53.3 points

const DOMAIN = 'acme.example'
const SILENT = 'silent.example'
const MONDAY_0830_PARIS = new Date('2026-11-23T07:30:00Z')

let t: TestApp
let smtp: SmtpReceiver
let owner: TestAccount
const to = 'digest-reader@example.org'

const at = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000
const pass = (count: number) => ({
  ip: '74.125.0.1',
  count,
  dkim: [DOMAIN, 'google', 'pass'] as [string, string, string],
  spf: [DOMAIN, 'pass'] as [string, string],
})

async function upload(xml: string) {
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/reports', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/xml' },
      body: xml,
    }),
  )
  expect(response.status).toBeLessThan(300)
}

/** Sends the scheduler's job and waits for it to complete. */
async function runScheduler() {
  const boss = t.runtime.boss!
  const id = (await boss.send(SCHEDULE_DIGESTS.name, {}))!
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if ((await boss.getJobById(SCHEDULE_DIGESTS.name, id))?.state === 'completed') return
    await Bun.sleep(100)
  }
  throw new Error('the scheduler job did not complete')
}

const digestRuns = async () =>
  rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from digest_runs where account_id = ${owner.accountId}`,
    ),
  )[0]!.n

beforeAll(async () => {
  smtp = await startSmtpReceiver()
  t = await startTestApp(
    { MAIL_SMTP_URL: smtp.url, PUBLIC_URL: 'http://dmarcwatch.test', RATE_LIMIT_API_PER_MINUTE: '10000' },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  for (const name of [DOMAIN, SILENT]) {
    await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: name } })
    await t.db.database.db.execute(
      sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${name}`,
    )
  }
  await upload(
    reportXml(DOMAIN, 'google.com', 'p-1', at('2026-11-12'), [pass(40), { ip: '198.51.100.7', count: 60 }]),
  )
  await upload(
    reportXml(DOMAIN, 'google.com', 'c-1', at('2026-11-20'), [pass(90), { ip: '203.0.113.9', count: 10 }]),
  )
  await upload(reportXml(DOMAIN, 'yahoo.com', 'c-2', at('2026-11-21'), [pass(50)]))
  const saved = await t.request('PUT', '/api/v1/notifications', {
    token: owner.token,
    body: { digest: { frequency: 'weekly', recipients: [to], time_zone: 'Europe/Paris' } },
  })
  expect(saved.status).toBe(200)
}, 60_000)
afterAll(async () => {
  await t?.close()
  await smtp?.stop()
})

describe('the weekly digest', () => {
  test('not due before 08:00 local time, nor on another day than Monday', async () => {
    t.clock.now = new Date('2026-11-23T06:30:00Z') // 07:30 in Paris
    await runScheduler()
    expect(await digestRuns()).toBe(0)
    t.clock.now = new Date('2026-11-24T07:30:00Z') // Tuesday 08:30: the weekly digest waits for Monday
    await runScheduler()
    expect(await digestRuns()).toBe(0)
    expect(smtp.to(to)).toHaveLength(0)
  })

  test('due after 08:00 on Monday: the right figures, an inline PNG chart, digest unsubscribe; never twice', async () => {
    t.clock.now = MONDAY_0830_PARIS
    await runScheduler()
    const [mail] = await smtp.waitFor(to, 1, 60_000)
    const text = mail!.parsed.text ?? ''
    expect(mail!.parsed.subject).toBe('[dmarcwatch] Weekly digest: 93.3% DMARC pass, 150 messages')
    expect(text).toContain('2026-11-16 to 2026-11-22')
    expect(text).toContain('Messages: 150')
    expect(text).toContain('DMARC pass rate: 93.3% (+53.3 points) (before: 40.0%)')
    expect(text).toContain('2026-11-20: 90 / 10')
    expect(text).toContain('2026-11-21: 50 / 0')
    expect(text).toMatch(/Failing sources:\n {2}- 203\.0\.113\.9: 10 failing\n\n/)
    expect(text).toMatch(/New sources:\n {2}- 203\.0\.113\.9 for acme\.example: 10 messages\n\n/)
    expect(text).toContain('Open alerts (0):')
    expect(text).toMatch(/Domains with no reports:\n {2}- silent\.example\n/)
    expect(text).toContain(`${DOMAIN}: 150 messages, 93.3% pass`)
    // The chart: a PNG attachment the HTML references by its Content-ID (RFC 2392).
    const chart = mail!.parsed.attachments.find((a) => a.contentType === 'image/png')
    expect(chart).toBeDefined()
    expect([...chart!.content.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    // mailparser swaps a cid: reference for the image's data when the HTML has one (and marks it related).
    expect(chart!.cid).toBe('daily-volume@dmarcwatch')
    expect(chart!.related).toBe(true)
    expect(mail!.parsed.html || '').toContain('<img src="data:image/png;base64,iVBORw0KGgo')
    expect(mail!.header('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click')
    expect(mail!.parsed.text).toContain('Unsubscribe from the digest')
    // Later scheduler runs the same day find the digest claimed.
    t.clock.now = new Date('2026-11-23T09:30:00Z')
    await runScheduler()
    expect(await digestRuns()).toBe(1)
    await Bun.sleep(3000)
    expect(smtp.to(to)).toHaveLength(1)
  }, 90_000)

  test('GET /notifications/digest/preview answers the next digest as HTML with its chart inline', async () => {
    t.clock.now = MONDAY_0830_PARIS
    const res = await t.app.handle(
      new Request('http://localhost/api/v1/notifications/digest/preview', {
        headers: { authorization: `Bearer ${owner.token}` },
      }),
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    // Opened as a page, the mail runs no script and fetches nothing (a hostile-input sweep).
    expect(res.headers.get('content-security-policy')).toStartWith("default-src 'none'")
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const page = await res.text()
    expect(page).toContain('Weekly digest')
    expect(page).toContain('93.3%')
    expect(page).toContain('src="data:image/png;base64,iVBORw0KGgo')
  })
})
