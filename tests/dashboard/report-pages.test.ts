import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ASSETS } from '../../src/dashboard/assets.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { DAY, startReportWorld, tlsReport } from '../support/report-world.ts'
import { csrfOf, formClient } from './client.ts'

// The report pages (overview with its chart data, aggregate list and detail, failure reports,
// TLS reports, quarantine with Retry) through app.handle() with a cookie jar. Every report goes
// through the real intake (POST /api/v1/ingest/messages, the pg-boss job, the parsers); a second
// account's reports, domains and quarantined messages must never show or be reachable.

const suffix = Math.random().toString(36).slice(2, 8)
const OWNER_DOMAIN = 'reports.example'
const LATE_DOMAIN = 'second.example'
const OTHER_DOMAIN = 'other.example'

const world = await startReportWorld({
  owner: { email: `reports-${suffix}@example.com`, domains: [OWNER_DOMAIN, LATE_DOMAIN] },
  other: { email: `reports-other-${suffix}@example.com`, domains: [OTHER_DOMAIN] },
})
const { t, today, owner, other, ownerAccount, ownerToken, ingest, settled, verify } = world
const { otherAccount, otherToken } = world
const ids: Record<string, string> = {}

interface Row {
  ip: string
  count: number
  pass: boolean
}

function aggregateXml(domain: string, org: string, id: string, begin: number, rows: Row[]): string {
  const records = rows.map(
    (r) => `<record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count>
<policy_evaluated><disposition>${r.pass ? 'none' : 'quarantine'}</disposition><dkim>${r.pass ? 'pass' : 'fail'}</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>${domain}</header_from></identifiers>
<auth_results><dkim><domain>${domain}</domain><selector>sel1</selector><result>${r.pass ? 'pass' : 'fail'}</result></dkim>
<spf><domain>bounce.${domain}</domain><result>softfail</result></spf></auth_results></record>`,
  )
  return `<?xml version="1.0" encoding="UTF-8"?>
<feedback><report_metadata><org_name>${org}</org_name><email>noreply@${org}</email><report_id>${id}</report_id>
<date_range><begin>${begin}</begin><end>${begin + DAY - 1}</end></date_range></report_metadata>
<policy_published><domain>${domain}</domain><adkim>r</adkim><aspf>s</aspf><p>quarantine</p><sp>reject</sp><pct>100</pct></policy_published>
${records.join('\n')}
</feedback>`
}

const aggregateMail = (xml: string, name: string) =>
  multipart([attachment('application/gzip', `${name}.xml.gz`, Bun.gzipSync(new TextEncoder().encode(xml)))])

function failureMail(domain: string, local: string, arrival: Date): string {
  const date = arrival.toUTCString().replace('GMT', '+0000')
  return [
    'From: abuse@receiver.example',
    'To: dmarc@reports.test',
    `Subject: DMARC failure report for ${domain}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'A message failed DMARC.',
    '--b1',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: auth-failure',
    'User-Agent: receiver/1.0',
    'Version: 1',
    `Original-Mail-From: ${local}@${domain}`,
    'Original-Rcpt-To: bob@receiver.example',
    `Arrival-Date: ${date}`,
    'Source-IP: 192.0.2.55',
    `Reported-Domain: ${domain}`,
    'Auth-Failure: dmarc',
    'Delivery-Result: reject',
    '',
    '--b1',
    'Content-Type: text/rfc822-headers',
    '',
    `From: Alice <${local}@${domain}>`,
    'To: bob@receiver.example',
    'Subject: Quarterly <numbers>',
    `Date: ${date}`,
    `Message-ID: <m1@${domain}>`,
    '',
    '--b1--',
    '',
  ].join('\r\n')
}

function tlsMail(domain: string, begin: number): string {
  const report = tlsReport(domain, `tls-${suffix}`, begin)
  return multipart(
    [attachment('application/tlsrpt+gzip', 'report.json.gz', Bun.gzipSync(JSON.stringify(report)))],
    'report',
    '; report-type=tlsrpt',
  )
}

const reportIdOf = (org: string) => world.idOf('aggregate_reports', 'reporter_org', org)

beforeAll(async () => {
  await verify(ownerAccount, OWNER_DOMAIN)
  await verify(otherAccount, OTHER_DOMAIN)

  // Owner: yesterday 120 records (a second page of records), the day before a small report.
  const many = Array.from({ length: 120 }, (_, i) => ({
    ip: `198.51.100.${i + 1}`,
    count: 200 - i,
    pass: i % 4 !== 0,
  }))
  const reports: [string, string][] = [
    [aggregateXml(OWNER_DOMAIN, 'big-receiver.example', `big-${suffix}`, today - DAY, many), 'big'],
    [
      aggregateXml(OWNER_DOMAIN, 'small-receiver.example', `small-${suffix}`, today - 2 * DAY, [
        { ip: '192.0.2.10', count: 40, pass: true },
        { ip: '203.0.113.66', count: 10, pass: false },
      ]),
      'small',
    ],
  ]
  for (const [xml, name] of reports)
    expect((await ingest(ownerToken, aggregateMail(xml, name))).status).toBe('processed')
  const foreign = aggregateXml(OTHER_DOMAIN, 'foreign-receiver.example', `foreign-${suffix}`, today - DAY, [
    { ip: '192.0.2.99', count: 7777, pass: true },
  ])
  expect((await ingest(otherToken, aggregateMail(foreign, 'foreign'))).status).toBe('processed')
  ids.big = await reportIdOf('big-receiver.example')
  ids.foreign = await reportIdOf('foreign-receiver.example')

  const arrival = new Date((today - DAY) * 1000 + 3_600_000)
  expect((await ingest(ownerToken, failureMail(OWNER_DOMAIN, 'alice.secret', arrival))).status).toBe(
    'processed',
  )
  expect((await ingest(otherToken, failureMail(OTHER_DOMAIN, 'mallory', arrival))).status).toBe('processed')
  expect((await ingest(ownerToken, tlsMail(OWNER_DOMAIN, today - DAY))).status).toBe('processed')
  expect((await ingest(otherToken, tlsMail(OTHER_DOMAIN, today - DAY))).status).toBe('processed')

  // Quarantine: a report for a domain not verified yet, and one for the other account.
  const late = aggregateXml(LATE_DOMAIN, 'late-receiver.example', `late-${suffix}`, today - DAY, [
    { ip: '192.0.2.20', count: 5, pass: true },
  ])
  const held = await ingest(ownerToken, aggregateMail(late, 'late'))
  expect(held).toMatchObject({ status: 'quarantined', code: 'domain_not_verified' })
  ids.late = held.id
  const stray = await ingest(otherToken, 'From: x@example.org\r\nSubject: hello\r\n\r\nno report here\r\n')
  expect(stray).toMatchObject({ status: 'quarantined', code: 'no_report_found' })
  ids.stray = stray.id
}, 120_000)

afterAll(() => world.close())

describe('overview', () => {
  test('the chart carries its series as JSON data and loads uPlot from the app', async () => {
    const page = await owner.get('/reports')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<nav class="sub" aria-label="Reports">')
    expect(page.html).toContain('<a href="/reports" aria-current="page">Overview</a>')
    expect(page.html).toContain(`<link rel="stylesheet" href="${ASSETS.uplotCss.path}">`)
    expect(page.html).toContain(`<script src="${ASSETS.uplotJs.path}" defer></script>`)
    // Data, not script: the only executable scripts are the app's own files.
    const scripts = [...page.html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!)
    for (const attributes of scripts)
      expect(attributes).toMatch(
        /^ (src="\/assets\/[a-z]+\.[0-9a-f]{16}\.js" defer|type="application\/json" id="[\w-]+")$/,
      )
    const json = /<script type="application\/json" id="chart-data">([^<]*)<\/script>/.exec(page.html)
    const data = JSON.parse(json![1]!)
    const api = await t.request('GET', '/api/v1/dmarc-reports/overview', { token: ownerToken })
    expect(data.total).toBe(api.body.data.totals.messages)
    expect(data.total).toBe(many() + 50)
    expect(data.days).toHaveLength(30)
    expect(data.counts.reduce((a: number, b: number) => a + b, 0)).toBe(data.total)
    expect(data.rate).toBe(api.body.data.rates.dmarc_pass)
    expect(page.html).toContain('<div class="chart-live" id="chart-live"')
    // The other account's report stays out.
    expect(page.html).not.toContain('foreign-receiver.example')
    expect(page.html).toContain(`href="/reports/${ids.big}?domain=${OWNER_DOMAIN}"`)
  })

  test('uPlot is served like the app assets: hashed, cached a year, with an ETag', async () => {
    for (const asset of [ASSETS.uplotJs, ASSETS.uplotCss]) {
      const answer = await t.app.handle(new Request(`${t.config.publicUrl}${asset.path}`))
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toBe(asset.type)
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(answer.headers.get('etag')).toBe(asset.etag)
    }
    expect(new TextDecoder().decode(ASSETS.uplotJs.body)).toStartWith('/*! https://github.com/leeoniya/uPlot')
  })
})

const many = () => Array.from({ length: 120 }, (_, i) => 200 - i).reduce((a, b) => a + b, 0)

describe('aggregate reports', () => {
  test('the list shows the account’s reports of the chosen domain and period', async () => {
    const page = await owner.get('/reports/list')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<a href="/reports/list" aria-current="page">Aggregate reports</a>')
    // Without a choice, all the account's domains (second.example has none processed yet).
    expect(page.html).toContain('<option value="" selected>All domains</option>')
    expect(page.html).toContain('2 reports for all domains')
    expect(page.html).toContain('big-receiver.example')
    expect(page.html).toContain('small-receiver.example')
    expect(page.html).not.toContain(OTHER_DOMAIN)
    const one = await owner.get(`/reports/list?domain=${OWNER_DOMAIN}`)
    expect(one.html).toContain(`<option value="${OWNER_DOMAIN}" selected>`)
    expect(one.html).toContain('2 reports for reports.example')
    const week = await owner.get(`/reports/list?domain=${OWNER_DOMAIN}&days=7`)
    expect(week.html).toContain('<option value="7" selected>')
    const before = new Date((today - 40 * DAY) * 1000).toISOString().slice(0, 10)
    const old = await owner.get(`/reports/list?domain=${OWNER_DOMAIN}&from=${before}&to=${before}`)
    expect(old.html).toContain('0 reports for reports.example')
    const wrong = await owner.get(`/reports/list?domain=${OWNER_DOMAIN}&days=365`)
    expect(wrong.html).toContain('role="alert"')
    expect(wrong.html).toContain('big-receiver.example')
  })

  test('another account’s domain is a 404, and its reports never show', async () => {
    const foreign = await owner.get(`/reports/list?domain=${OTHER_DOMAIN}`)
    expect(foreign.status).toBe(404)
    expect(foreign.html).not.toContain('foreign-receiver.example')
    const theirs = await other.get('/reports/list')
    expect(theirs.html).toContain('foreign-receiver.example')
    expect(theirs.html).not.toContain('big-receiver.example')
  })

  test('the detail shows metadata, the published policy and the records, paginated', async () => {
    const page = await owner.get(`/reports/${ids.big}?domain=${OWNER_DOMAIN}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<h1>Aggregate report from big-receiver.example</h1>')
    expect(page.html).toContain(`<code>big-${suffix}</code>`)
    expect(page.html).toContain('<dt>Policy (p)</dt><dd><code>quarantine</code></dd>')
    expect(page.html).toContain('<dt>SPF alignment (aspf)</dt><dd><code>s</code></dd>')
    expect(page.html).toContain('Records <span class="muted">(120)</span>')
    // Largest count first, 100 a page; DKIM aligned, SPF (bounce. subdomain, strict) not.
    expect(page.html).toMatch(
      /<th scope="row"><code>198\.51\.100\.1<\/code><\/th>\s*<td class="num">200<\/td>/,
    )
    expect(page.html.match(/<th scope="row"><code>198\.51\.100\.\d+<\/code>/g)).toHaveLength(100)
    expect(page.html).toContain('<span class="badge ok">aligned</span>')
    expect(page.html).toContain('<span class="badge error">not aligned</span>')
    expect(page.html).toContain('DKIM <code>reports.example</code> s=<code>sel1</code>: pass')
    expect(page.html).toContain('Page 1 of 2')
    const second = await owner.get(`/reports/${ids.big}?domain=${OWNER_DOMAIN}&page=2`)
    expect(second.html.match(/<th scope="row"><code>198\.51\.100\.\d+<\/code>/g)).toHaveLength(20)
    expect(second.html).toContain('<code>198.51.100.120</code>')
  })

  test('foreign, malformed or wrong-domain report ids are a 404 page', async () => {
    for (const path of [
      `/reports/${ids.foreign}?domain=${OTHER_DOMAIN}`,
      `/reports/${ids.foreign}?domain=${OWNER_DOMAIN}`,
      `/reports/${ids.foreign}`,
      `/reports/${ids.big}?domain=${LATE_DOMAIN}`,
      `/reports/abc?domain=${OWNER_DOMAIN}`,
      '/reports/abc',
      `/reports/999999999?domain=${OWNER_DOMAIN}`,
    ]) {
      const page = await owner.get(path)
      expect(page.status).toBe(404)
      expect(page.html).toContain('Report not found')
      expect(page.html).not.toContain('7,777')
    }
    expect((await other.get(`/reports/${ids.big}?domain=${OWNER_DOMAIN}`)).status).toBe(404)
    expect((await other.get(`/reports/${ids.big}`)).status).toBe(404)
  })
})

describe('failure reports', () => {
  test('the list and detail show the account’s reports, redacted', async () => {
    const page = await owner.get('/reports/failures')
    expect(page.status).toBe(200)
    expect(page.html).toContain('1 failure report<')
    expect(page.html).toContain('<code>192.0.2.55</code>')
    expect(page.html).not.toContain('alice.secret')
    expect(page.html).not.toContain(OTHER_DOMAIN)
    const link = /href="\/reports\/failures\/(\d+)"/.exec(page.html)
    const detail = await owner.get(`/reports/failures/${link![1]}`)
    expect(detail.status).toBe(200)
    expect(detail.html).toContain('<h1>Failure report for reports.example</h1>')
    expect(detail.html).toContain('Local parts of addresses are redacted.')
    expect(detail.html).toMatch(/redacted-[0-9a-f]{8}@reports\.example/)
    expect(detail.html).not.toContain('alice.secret')
    expect(detail.html).toContain('Quarterly &lt;numbers&gt;')
    expect(detail.html).toContain('<dt>Delivery result</dt><dd>reject</dd>')
    // The other account's report: not reachable by id, not listed.
    const theirs = await other.get('/reports/failures')
    const theirId = /href="\/reports\/failures\/(\d+)"/.exec(theirs.html)![1]
    expect((await owner.get(`/reports/failures/${theirId}`)).status).toBe(404)
    expect((await owner.get('/reports/failures/x1')).status).toBe(404)
    expect((await owner.get(`/reports/failures?domain=${OTHER_DOMAIN}`)).status).toBe(404)
    const filtered = await owner.get(`/reports/failures?domain=${LATE_DOMAIN}`)
    expect(filtered.html).toContain('0 failure reports')
  })
})

describe('TLS reports', () => {
  test('the summary shows sessions, failure types, reports and a chart of the domain', async () => {
    const page = await owner.get('/reports/tls')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<dt>Successful sessions</dt><dd>900</dd>')
    expect(page.html).toContain('<dt>Failed sessions</dt><dd>100</dd>')
    expect(page.html).toContain('<dt>Success rate</dt><dd>90.0%</dd>')
    expect(page.html).toContain('<code>certificate-expired</code></th><td class="num">100</td>')
    expect(page.html).toContain(`<code>tls-${suffix}</code>`)
    const json = /<script type="application\/json" id="tls-chart-data">([^<]*)<\/script>/.exec(page.html)
    expect(JSON.parse(json![1]!)).toMatchObject({ total: 1000, rate: 90, noun: 'sessions' })
    expect((await owner.get(`/reports/tls?domain=${OTHER_DOMAIN}`)).status).toBe(404)
    const empty = await owner.get(`/reports/tls?domain=${LATE_DOMAIN}`)
    expect(empty.html).toContain('No TLS sessions reported in this period.')
  })
})

describe('quarantine', () => {
  test('lists the account’s messages with the reason; Retry needs CSRF, then re-processes', async () => {
    const page = await owner.get('/reports/quarantine')
    expect(page.status).toBe(200)
    expect(page.html).toContain('domain_not_verified')
    expect(page.html).toContain(
      'Processed by itself once the domain is verified; <a href="/domains">your domain’s page</a> shows how.',
    )
    expect(page.html).toContain(`action="/reports/quarantine/${ids.late}/retry"`)
    expect(page.html).not.toContain(ids.stray!)
    expect(page.html).not.toContain('no_report_found')

    const refused = await owner.post(`/reports/quarantine/${ids.late}/retry`, {})
    expect(refused.status).toBe(403)
    expect((await settled(ids.late!)).status).toBe('quarantined')
    // Retried too early it fails again, with the same reason: nothing is lost.
    const early = await owner.post(`/reports/quarantine/${ids.late}/retry`, { _csrf: csrfOf(page.html) })
    expect(early.status).toBe(303)
    expect(early.location).toBe('/reports/quarantine?retried=1')
    expect(await settled(ids.late!)).toMatchObject({ status: 'quarantined', code: 'domain_not_verified' })

    await verify(ownerAccount, LATE_DOMAIN)
    const again = await owner.post(`/reports/quarantine/${ids.late}/retry`, { _csrf: csrfOf(page.html) })
    expect(again.status).toBe(303)
    const notice = await owner.get(again.location!)
    expect(notice.html).toContain('The message is queued to be processed again.')
    expect((await settled(ids.late!)).status).toBe('processed')
    expect((await owner.get('/reports/quarantine')).html).toContain('Nothing in quarantine.')
    expect((await owner.get(`/reports/list?domain=${LATE_DOMAIN}`)).html).toContain('late-receiver.example')
  }, 60_000)

  test('another account’s message, or one not in quarantine, is a 404 and stays as it is', async () => {
    const csrf = await owner.csrf()
    for (const id of [ids.stray!, ids.late!, 'not-a-uuid']) {
      const answer = await owner.post(`/reports/quarantine/${id}/retry`, { _csrf: csrf })
      expect(answer.status).toBe(404)
      expect(answer.html).toContain('Message not found')
    }
    expect((await settled(ids.stray!)).status).toBe('quarantined')
    const theirs = await other.get('/reports/quarantine')
    expect(theirs.html).toContain('no_report_found')
    expect(theirs.html).not.toContain('domain_not_verified')
  })
})

describe('sub-navigation', () => {
  test('every report page marks its own tab and needs a session', async () => {
    const tabs: [string, string][] = [
      ['/reports', 'Overview'],
      ['/reports/list', 'Aggregate reports'],
      ['/reports/failures', 'Failure reports'],
      ['/reports/tls', 'TLS reports'],
      ['/reports/quarantine', 'Quarantine'],
      ['/reports/upload', 'Upload reports'],
    ]
    const anonymous = formClient(t)
    for (const [path, label] of tabs) {
      const page = await owner.get(path)
      expect(page.html).toContain(`<a href="${path}" aria-current="page">${label}</a>`)
      expect(page.html).toContain('<a href="/reports" aria-current="page">Reports</a>')
      expect(page.html.match(/aria-current="page"/g)).toHaveLength(2)
      expect(page.html).not.toMatch(/style="/)
      const away = await anonymous.get(path)
      expect(away.status).toBe(303)
      expect(away.location).toStartWith('/login?next=')
    }
  })
})
