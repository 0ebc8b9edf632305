import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AlertCandidate } from '../../domain/alerts/alert.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { aggregateReports, dailyDomainTotals, dailyRollups } from '../../infrastructure/db/schema/reports.ts'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// Alerts (list, filters, detail, resolve), the reports overview with its chart, and the embed keys
// of Settings → API access, through app.handle() with a cookie jar.

let dns: DnsTestServer
let t: TestApp
let client: FormClient
let other: FormClient
let accountId: string
let otherAlertId: number
const alertIds: Record<string, number> = {}
const alertUuids: Record<string, string> = {}
let otherAlertUuid: string

const suffix = Math.random().toString(36).slice(2, 8)

async function accountOf(email: string): Promise<string> {
  const rows = rowsOf<{ account_id: string }>(
    await t.db.database.db.execute(
      sql`select m.account_id from memberships m join users u on u.id = m.user_id where lower(u.email) = lower(${email})`,
    ),
  )
  return rows[0]!.account_id
}

async function domainIdOf(account: string, name: string): Promise<number> {
  const rows = rowsOf<{ id: string }>(
    await t.db.database.db.execute(
      sql`select id from domains where account_id = ${account} and name = ${name}`,
    ),
  )
  return Number(rows[0]!.id)
}

const candidate = (
  over: Partial<AlertCandidate> & Pick<AlertCandidate, 'type' | 'title'>,
): AlertCandidate => ({
  subject: '',
  severity: 'high',
  details: { evidence: {}, remedy: 'Do something.' },
  ...over,
})

const day = (offset: number) =>
  new Date(t.clock.now.getTime() - offset * 86_400_000).toISOString().slice(0, 10)

beforeAll(async () => {
  dns = await startDnsServer({
    'alerts.example': [{ type: 'TXT', data: 'v=spf1 -all' }],
    '_dmarc.alerts.example': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  })
  t = await startTestApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' })
  client = formClient(t)
  other = formClient(t)
  const email = `alerts-${suffix}@example.com`
  const otherEmail = `alerts-other-${suffix}@example.com`
  await client.signUp(email)
  await other.signUp(otherEmail)
  accountId = await accountOf(email)
  const otherAccount = await accountOf(otherEmail)

  const added = await client.post('/domains', { _csrf: await client.csrf(), domain_name: 'alerts.example' })
  expect(added.status).toBe(303)
  const domainId = await domainIdOf(accountId, 'alerts.example')

  const store = pgAlertStore(t.db.database.db)
  // Remove what the first check opened, so the counts below are ours alone.
  await t.db.database.db.execute(sql`delete from alerts where account_id = ${accountId}`)
  const now = t.clock.now
  await store.applyPlan(
    accountId,
    domainId,
    {
      create: [
        candidate({
          type: 'dmarc_failure_rate',
          severity: 'critical',
          title: 'DMARC failures <above> 20%',
          details: {
            evidence: { failure_rate: 0.35, failing_messages: 350, sources: ['192.0.2.1', '192.0.2.2'] },
            remedy: 'Authorize the failing senders in SPF & DKIM.',
          },
        }),
        candidate({ type: 'spf_permissive_all', severity: 'medium', title: 'SPF allows everyone' }),
      ],
      update: [],
      resolve: [],
    },
    now,
  )
  await store.applyPlan(
    accountId,
    null,
    {
      create: [
        candidate({ type: 'webhook_delivery_failing', severity: 'low', title: 'Webhook deliveries fail' }),
      ],
      update: [],
      resolve: [],
    },
    now,
  )
  for (const alert of (await store.list(accountId, {}, { page: 1, perPage: 100 })).items)
    alertIds[alert.type] = alert.number
  for (const alert of (await store.list(accountId, {}, { page: 1, perPage: 100 })).items)
    alertUuids[alert.type] = alert.alertId
  await store.applyPlan(
    otherAccount,
    null,
    {
      create: [candidate({ type: 'ingest_quarantine_growing', title: 'Not yours' })],
      update: [],
      resolve: [],
    },
    now,
  )
  otherAlertId = (await store.list(otherAccount, {}, { page: 1, perPage: 10 })).items[0]!.number
  otherAlertUuid = (await store.list(otherAccount, {}, { page: 1, perPage: 10 })).items[0]!.alertId

  // Report figures: two days of totals, a failing source, one report.
  const db = t.db.database.db
  await db.insert(dailyDomainTotals).values([
    {
      accountId,
      domainId,
      day: day(2),
      messages: 1000,
      dmarcPass: 900,
      dkimAligned: 920,
      spfAligned: 880,
      dispositionNone: 990,
      dispositionQuarantine: 10,
      dispositionReject: 0,
      dispositionOther: 0,
      reports: 3,
    },
    {
      accountId,
      domainId,
      day: day(1),
      messages: 500,
      dmarcPass: 250,
      dkimAligned: 260,
      spfAligned: 240,
      dispositionNone: 500,
      dispositionQuarantine: 0,
      dispositionReject: 0,
      dispositionOther: 0,
      reports: 2,
    },
  ])
  await db.insert(dailyRollups).values({
    accountId,
    domainId,
    day: day(1),
    sourceIp: '198.51.100.7',
    disposition: 'none',
    dkimAligned: false,
    spfAligned: false,
    messages: 240,
    reports: 1,
  })
  await db.insert(aggregateReports).values({
    accountId,
    domainId,
    reporterOrg: 'Mail <Receiver>',
    reportId: `r-${suffix}`,
    policyDomain: 'alerts.example',
    beginAt: new Date(`${day(2)}T00:00:00Z`),
    endAt: new Date(`${day(1)}T00:00:00Z`),
    contentHash: `hash-${suffix}`,
    variant: 'rfc7489',
    policy: {},
    errors: [],
    recordCount: 1,
    messageCount: 1500,
  })
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

describe('logged out', () => {
  test('each page leads to the login with next=', async () => {
    const anonymous = formClient(t)
    for (const path of ['/alerts', `/alerts/${alertIds.dmarc_failure_rate}`, '/reports', '/settings/api']) {
      const answer = await anonymous.get(path)
      expect(answer.status).toBe(303)
      expect(answer.location).toBe(`/login?next=${encodeURIComponent(path)}`)
    }
  })
})

describe('alerts', () => {
  test('the list shows open alerts by default, with badges, domain and times', async () => {
    const page = await client.get('/alerts')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(page.html).toContain('<a href="/alerts" aria-current="page">Alerts</a>')
    expect(page.html).toContain('<h2>3 alerts</h2>')
    expect(page.html).toContain('DMARC failures &lt;above&gt; 20%')
    expect(page.html).toContain('<span class="badge critical">critical</span>')
    expect(page.html).toContain('href="/domains/alerts.example"')
    expect(page.html).toContain(`href="/alerts/${alertIds.dmarc_failure_rate}"`)
    expect(page.html).toContain('<time datetime=')
    expect(page.html).not.toContain('Not yours')
  })

  test('filters by status, severity and domain; unknown values fall back', async () => {
    const critical = await client.get('/alerts?status=open&severity=critical')
    expect(critical.html).toContain('<h2>1 alert</h2>')
    expect(critical.html).toContain('<option value="critical" selected>')
    const domain = await client.get('/alerts?status=all&domain=alerts.example')
    expect(domain.html).toContain('<h2>2 alerts</h2>')
    expect(domain.html).not.toContain('Webhook deliveries fail')
    const resolved = await client.get('/alerts?status=resolved')
    expect(resolved.html).toContain('No alerts match.')
    // Unknown filter values fall back to the defaults rather than failing.
    const odd = await client.get('/alerts?status=bogus&severity=nope&page=x')
    expect(odd.status).toBe(200)
    expect(odd.html).toContain('<h2>3 alerts</h2>')
  })

  test('the detail shows evidence as a definition list and the remedy', async () => {
    const page = await client.get(`/alerts/${alertIds.dmarc_failure_rate}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<h1>DMARC failures &lt;above&gt; 20%</h1>')
    expect(page.html).toContain('<dt>failure rate</dt><dd>0.35</dd>')
    expect(page.html).toContain('<dt>sources</dt><dd>192.0.2.1, 192.0.2.2</dd>')
    expect(page.html).toContain('Authorize the failing senders in SPF &amp; DKIM.')
    expect(page.html).toContain(`action="/alerts/${alertIds.dmarc_failure_rate}/resolve"`)
  })

  test('a link from before alerts had numbers (/alerts/<uuid>) goes to the alert', async () => {
    const page = await client.get(`/alerts/${alertUuids.dmarc_failure_rate}`)
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe(`/alerts/${alertIds.dmarc_failure_rate}`)
  })

  test("another account's alert, or a malformed id, is a 404 page", async () => {
    for (const id of [otherAlertId, otherAlertUuid, 'not-a-number']) {
      const page = await client.get(`/alerts/${id}`)
      expect(page.status).toBe(404)
      expect(page.html).toContain('Alert not found')
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    }
    const resolve = await client.post(`/alerts/${otherAlertId}/resolve`, { _csrf: await client.csrf() })
    expect(resolve.status).toBe(404)
    const still = await other.get(`/alerts/${otherAlertId}`)
    expect(still.html).toContain('<span class="badge warning">open</span>')
  })

  test('resolving needs the CSRF token, then goes back to the detail with a notice', async () => {
    const id = alertIds.spf_permissive_all!
    const refused = await client.post(`/alerts/${id}/resolve`, {})
    expect(refused.status).toBe(403)
    const wrong = await client.post(`/alerts/${id}/resolve`, { _csrf: 'x'.repeat(43) })
    expect(wrong.status).toBe(403)
    expect((await client.get(`/alerts/${id}`)).html).toContain('<span class="badge warning">open</span>')

    const page = await client.get(`/alerts/${id}`)
    const done = await client.post(`/alerts/${id}/resolve`, { _csrf: csrfOf(page.html) })
    expect(done.status).toBe(303)
    expect(done.location).toBe(`/alerts/${id}?resolved=1`)
    const after = await client.get(done.location!)
    expect(after.html).toContain('The alert is resolved.')
    expect(after.html).toContain('resolved by a user')
    expect(after.html).not.toContain('/resolve"')
    const resolved = await client.get('/alerts?status=resolved')
    expect(resolved.html).toContain('<h2>1 alert</h2>')
    expect(resolved.html).toContain('SPF allows everyone')
  })
})

describe('reports', () => {
  test('the overview shows the API figures, an accessible chart and the data as a table', async () => {
    const page = await client.get('/reports')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("style-src 'self'")
    expect(page.html).toContain('<a href="/reports" aria-current="page">Reports</a>')
    const api = await t.request('GET', '/api/v1/dmarc-reports/overview', {
      token: await t.tokenFor(`alerts-${suffix}@example.com`),
    })
    expect(api.status).toBe(200)
    expect(api.body.data.totals.messages).toBe(1500)
    expect(page.html).toContain('<dt>Messages</dt><dd>1,500</dd>')
    expect(page.html).toContain(
      `<dt>DMARC pass rate</dt><dd>${api.body.data.rates.dmarc_pass.toFixed(1)}%</dd>`,
    )
    // The chart: an SVG image with a title and description, bars and the pass-rate line.
    expect(page.html).toContain('role="img" aria-labelledby="chart-title chart-desc"')
    expect(page.html).toMatch(/<rect class="bar"/)
    expect(page.html).toMatch(/<polyline class="rate" points="[\d., ]+"/)
    expect(page.html).not.toMatch(/style="/)
    // The table fallback, every day of the period, with the rates.
    expect(page.html).toContain(
      `<th scope="row">${day(2)}</th><td class="num">1,000</td><td class="num">900</td><td class="num">90.0%</td>`,
    )
    expect(page.html).toContain(
      `<th scope="row">${day(1)}</th><td class="num">500</td><td class="num">250</td><td class="num">50.0%</td>`,
    )
    expect(page.html.match(/<th scope="row">\d{4}-\d{2}-\d{2}<\/th>/g)?.length).toBe(30)
    // Dispositions, failing sources, recent reports linking to the domain.
    expect(page.html).toContain('<th scope="row">quarantine</th><td class="num">10</td>')
    expect(page.html).toContain('<code>198.51.100.7</code>')
    expect(page.html).toContain('<a href="/domains/alerts.example">alerts.example</a>')
    expect(page.html).toContain('Mail &lt;Receiver&gt;')
  })

  test('an account without reports gets an empty overview', async () => {
    const page = await other.get('/reports')
    expect(page.status).toBe(200)
    expect(page.html).toContain('No messages reported in this period.')
    expect(page.html).not.toContain('<svg')
    expect(page.html).not.toContain('alerts.example')
  })
})

describe('embed keys', () => {
  test('create with name and origins, show the snippet, refuse bad input, delete', async () => {
    const empty = await client.get('/settings/api')
    expect(empty.html).toContain('No embed keys yet.')
    const csrf = csrfOf(empty.html)

    const bad = await client.post('/settings/api/embed-keys', {
      _csrf: csrf,
      embed_name: 'Site',
      allowed_origins: 'https://ok.example\nnot an origin',
    })
    expect(bad.status).toBe(400)
    expect(bad.html).toContain('There is a problem')
    expect(bad.html).toContain(
      'id="allowed_origins" name="allowed_origins" rows="3" aria-describedby="allowed_origins-hint allowed_origins-error" aria-invalid="true"',
    )
    expect(bad.html).toContain('not an origin</textarea>')

    const noCsrf = await client.post('/settings/api/embed-keys', {
      embed_name: 'Site',
      allowed_origins: 'https://www.example.com',
    })
    expect(noCsrf.status).toBe(403)

    const created = await client.post('/settings/api/embed-keys', {
      _csrf: csrf,
      embed_name: 'Marketing <site>',
      allowed_origins: 'https://www.example.com\nhttps://example.com/',
    })
    expect(created.status).toBe(303)
    const page = await client.get(created.location!)
    expect(page.html).toContain('Embed key created.')
    expect(page.html).toContain('Marketing &lt;site&gt;')
    expect(page.html).toContain('https://www.example.com, https://example.com')
    const key = /ek_[a-z2-7]+/.exec(page.html)![0]
    expect(page.html).toContain(
      Bun.escapeHTML(`<script src="${t.config.publicUrl}/embed/widget.js" data-key="${key}" async></script>`),
    )
    // The API lists the same key and snippet.
    const api = await t.request('GET', '/api/v1/embed-keys', {
      token: await t.tokenFor(`alerts-${suffix}@example.com`),
    })
    expect(api.body.data[0].key).toBe(key)
    expect(page.html).toContain(Bun.escapeHTML(api.body.data[0].snippet))

    // Another account cannot delete it.
    const id = api.body.data[0].id as string
    const refused = await other.post(`/settings/api/embed-keys/${id}/delete`, { _csrf: await other.csrf() })
    expect(refused.location).toBe('/settings/api?embed_deleted=none')
    expect((await other.get(refused.location!)).html).toContain('No such embed key')
    expect((await client.get('/settings/api')).html).toContain(key)

    const deleted = await client.post(`/settings/api/embed-keys/${id}/delete`, { _csrf: csrf })
    expect(deleted.status).toBe(303)
    const after = await client.get(deleted.location!)
    expect(after.html).toContain('The embed key is deleted.')
    expect(after.html).not.toContain(key)
  })
})
