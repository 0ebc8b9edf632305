import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { DAY, startReportWorld } from '../support/report-world.ts'
import { type FormClient, formClient } from './client.ts'

// The report pages' account-wide reads: /reports/list over all domains (the default), a report's
// detail without ?domain=, and a TLS report's own page. Reports arrive through the real intake
// (POST /api/v1/ingest/messages, the pg-boss job, the parsers). Both accounts own a domain named
// shared.example, so a page that looked reports up by domain name alone would leak.

const suffix = Math.random().toString(36).slice(2, 8)
const ALPHA = 'alpha.example'
const SHARED = 'shared.example'

const world = await startReportWorld({
  owner: { email: `more-${suffix}@example.com`, domains: [ALPHA, SHARED] },
  other: { email: `more-other-${suffix}@example.com`, domains: [SHARED] },
})
const { t, today, owner, other, ownerToken, otherToken, idOf } = world
const ids: Record<string, string> = {}

function aggregateMail(domain: string, org: string, begin: number, count: number): string {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<feedback><report_metadata><org_name>${org}</org_name><email>noreply@${org}</email><report_id>${org}-${suffix}</report_id>
<date_range><begin>${begin}</begin><end>${begin + DAY - 1}</end></date_range></report_metadata>
<policy_published><domain>${domain}</domain><p>reject</p></policy_published>
<record><row><source_ip>192.0.2.44</source_ip><count>${count}</count>
<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
<identifiers><header_from>${domain}</header_from></identifiers>
<auth_results><dkim><domain>${domain}</domain><result>pass</result></dkim><spf><domain>${domain}</domain><result>pass</result></spf></auth_results></record>
</feedback>`
  const gzip = Bun.gzipSync(new TextEncoder().encode(xml))
  return multipart([attachment('application/gzip', `${org}.xml.gz`, gzip)])
}

function tlsMail(domain: string, org: string, begin: number): string {
  const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000', '')
  const report = {
    'organization-name': org,
    'date-range': { 'start-datetime': iso(begin), 'end-datetime': iso(begin + DAY - 1) },
    'contact-info': `sts-reporting@${org}`,
    'report-id': `${org}-${suffix}`,
    policies: [
      {
        policy: {
          'policy-type': 'sts',
          'policy-string': ['version: STSv1', 'mode: enforce', `mx: mx1.${domain}`, 'max_age: 86400'],
          'policy-domain': domain,
          'mx-host': [`mx1.${domain}`],
        },
        summary: { 'total-successful-session-count': 5326, 'total-failure-session-count': 303 },
        'failure-details': [
          {
            'result-type': 'certificate-expired',
            'sending-mta-ip': '2001:db8:abcd:0012::1',
            'receiving-mx-hostname': `mx1.${domain}`,
            'failed-session-count': 100,
          },
          {
            'result-type': 'starttls-not-supported',
            'sending-mta-ip': '2001:db8:abcd:0013::1',
            'receiving-mx-hostname': `mx1.${domain}`,
            'receiving-mx-helo': `mx1-helo.${domain}`,
            'receiving-ip': '203.0.113.56',
            'failed-session-count': 200,
            'additional-information': 'https://reports.example/why?a=1&b=<2>',
          },
          {
            'result-type': 'validation-failure',
            'sending-mta-ip': '198.51.100.62',
            'receiving-ip': '203.0.113.58',
            'failed-session-count': 3,
            'failure-reason-code': 'X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED',
          },
        ],
      },
      {
        policy: { 'policy-type': 'no-policy-found', 'policy-domain': domain },
        summary: { 'total-successful-session-count': 50, 'total-failure-session-count': 0 },
      },
    ],
  }
  return multipart(
    [attachment('application/tlsrpt+gzip', 'report.json.gz', Bun.gzipSync(JSON.stringify(report)))],
    'report',
    '; report-type=tlsrpt',
  )
}

/** Through the HTTP intake; resolves once the job has processed the message. */
async function ingest(token: string, raw: string): Promise<void> {
  const { status, code } = await world.ingest(token, raw)
  expect({ status, code }).toEqual({ status: 'processed', code: null })
}

beforeAll(async () => {
  for (const account of [world.ownerAccount, world.otherAccount]) await world.verify(account)

  await ingest(ownerToken, aggregateMail(ALPHA, 'alpha-receiver.example', today - DAY, 1111))
  await ingest(ownerToken, aggregateMail(SHARED, 'shared-receiver.example', today - 2 * DAY, 2222))
  await ingest(otherToken, aggregateMail(SHARED, 'foreign-receiver.example', today - DAY, 7777))
  await ingest(ownerToken, tlsMail(ALPHA, 'company-x.example', today - DAY))
  await ingest(otherToken, tlsMail(SHARED, 'company-y.example', today - DAY))
  ids.alpha = await idOf('aggregate_reports', 'reporter_org', 'alpha-receiver.example')
  ids.shared = await idOf('aggregate_reports', 'reporter_org', 'shared-receiver.example')
  ids.foreign = await idOf('aggregate_reports', 'reporter_org', 'foreign-receiver.example')
  ids.tls = await idOf('tls_reports', 'organization', 'company-x.example')
  ids.foreignTls = await idOf('tls_reports', 'organization', 'company-y.example')
}, 120_000)

afterAll(() => world.close())

describe('all domains', () => {
  test('the list defaults to all the account’s domains, with a Domain column', async () => {
    for (const path of ['/reports/list', '/reports/list?domain=', '/reports/list?domain=&days=7']) {
      const page = await owner.get(path)
      expect(page.status).toBe(200)
      expect(page.html).toContain('<option value="" selected>All domains</option>')
      expect(page.html).toContain('2 reports for all domains')
      expect(page.html).toContain('<th scope="col">Domain</th>')
      // Newest first: alpha's report (yesterday), then shared's (the day before).
      const rows = [
        ...page.html.matchAll(
          /<a href="\/reports\/(\d+)\?domain=([a-z.]+)">([^<]+)<\/a><\/th>\s*<td>([^<]+)<\/td>/g,
        ),
      ]
      expect(rows.map((m) => [m[1], m[2], m[3], m[4]])).toEqual([
        [ids.alpha, ALPHA, 'alpha-receiver.example', ALPHA],
        [ids.shared, SHARED, 'shared-receiver.example', SHARED],
      ])
      expect(page.html).toContain('1,111')
      expect(page.html).toContain('2,222')
      expect(page.html).not.toContain('foreign-receiver.example')
      expect(page.html).not.toContain('7,777')
    }
  })

  test('choosing a domain narrows the list and drops the Domain column', async () => {
    const page = await owner.get(`/reports/list?domain=${SHARED}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain(`<option value="${SHARED}" selected>`)
    expect(page.html).toContain('<option value="">All domains</option>')
    expect(page.html).toContain('1 report for shared.example')
    expect(page.html).not.toContain('<th scope="col">Domain</th>')
    expect(page.html).toContain('shared-receiver.example')
    expect(page.html).not.toContain('alpha-receiver.example')
    expect(page.html).not.toContain('foreign-receiver.example')
  })

  test('the other account sees only its own report, under the same domain name', async () => {
    const page = await other.get('/reports/list')
    expect(page.html).toContain('1 report for all domains')
    expect(page.html).toContain(`href="/reports/${ids.foreign}?domain=${SHARED}"`)
    expect(page.html).not.toContain('shared-receiver.example')
    expect(page.html).not.toContain('alpha-receiver.example')
    expect(page.html).not.toContain(ALPHA)
  })
})

describe('report detail without ?domain=', () => {
  test('a report opens by its id alone, and its links name its domain', async () => {
    const page = await owner.get(`/reports/${ids.alpha}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<h1>Aggregate report from alpha-receiver.example</h1>')
    expect(page.html).toContain(`<dt>Domain</dt><dd><a href="/domains/${ALPHA}">${ALPHA}</a></dd>`)
    expect(page.html).toContain(`<a href="/reports/list?domain=${ALPHA}">← Aggregate reports of ${ALPHA}</a>`)
    expect(page.html).toContain('<dt>Policy (p)</dt><dd><code>reject</code></dd>')
    expect(page.html).toMatch(
      /<th scope="row"><code>192\.0\.2\.44<\/code><\/th>\s*<td class="num">1,111<\/td>/,
    )
    // The link with its domain still works, and shows the same report.
    const linked = await owner.get(`/reports/${ids.alpha}?domain=${ALPHA}`)
    expect(linked.status).toBe(200)
    expect(linked.html).toContain('<h1>Aggregate report from alpha-receiver.example</h1>')
  })

  test('another account’s report, a wrong domain or a malformed id is a 404 page', async () => {
    const cases: [FormClient, string][] = [
      [owner, `/reports/${ids.foreign}`],
      [owner, `/reports/${ids.foreign}?domain=${SHARED}`],
      [owner, `/reports/${ids.alpha}?domain=${SHARED}`],
      [owner, `/reports/${ids.alpha}?domain=nowhere.example`],
      [owner, '/reports/0'],
      [owner, '/reports/-1'],
      [owner, '/reports/1e3'],
      [owner, '/reports/9999999999'],
      [other, `/reports/${ids.alpha}`],
      [other, `/reports/${ids.shared}?domain=${SHARED}`],
    ]
    for (const [client, path] of cases) {
      const page = await client.get(path)
      expect(page.status).toBe(404)
      expect(page.html).toContain('Report not found')
      expect(page.html).not.toContain('-receiver.example')
    }
  })
})

describe('TLS report detail', () => {
  test('the TLS list links each report to its page', async () => {
    const page = await owner.get(`/reports/tls?domain=${ALPHA}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain(`<a href="/reports/tls/${ids.tls}">company-x.example</a>`)
    expect(page.html).not.toContain(`/reports/tls/${ids.foreignTls}"`)
  })

  test('shows the report, each policy with its summary, and the failure details', async () => {
    const page = await owner.get(`/reports/tls/${ids.tls}`)
    expect(page.status).toBe(200)
    const html = page.html
    expect(html).toContain('<a href="/reports/tls" aria-current="page">TLS reports</a>')
    expect(html).toContain('<h1>TLS report from company-x.example</h1>')
    expect(html).toContain(`<a href="/reports/tls?domain=${ALPHA}">← TLS reports of ${ALPHA}</a>`)
    expect(html).toContain(`<dt>Report ID</dt><dd><code>company-x.example-${suffix}</code></dd>`)
    expect(html).toContain('<dt>Contact</dt><dd>sts-reporting@company-x.example</dd>')
    const day = new Date((today - DAY) * 1000).toISOString().slice(0, 10)
    expect(html).toContain(`<time datetime="${day}T00:00:00.000Z">${day} 00:00 UTC</time>`)
    // Report totals: 5,326 + 50 successful, 303 failed.
    expect(html).toContain('<dt>Successful sessions</dt><dd>5,376</dd>')
    expect(html).toContain('<dt>Failed sessions</dt><dd>303</dd>')
    expect(html).toContain('<dt>Policies</dt><dd>2</dd>')

    const [first, second] = html.split('<section class="panel" aria-labelledby="policy-').slice(1)
    expect(first).toContain(`Policy 1: MTA-STS for ${ALPHA}</h2>`)
    expect(first).toContain('<dt>Policy type</dt><dd><code>sts</code></dd>')
    expect(first).toContain(`<li><code>mx1.${ALPHA}</code></li>`)
    expect(first).toContain(
      `<pre class="headers">version: STSv1\nmode: enforce\nmx: mx1.${ALPHA}\nmax_age: 86400</pre>`,
    )
    expect(first).toContain('<dt>Successful sessions</dt><dd>5,326</dd>')
    expect(first).toContain('<dt>Failed sessions</dt><dd>303</dd>')
    expect(first).toContain('<dt>Success rate</dt><dd>94.6%</dd>')
    const rows = first!
      .split('<tbody>')[1]!
      .split('</tr>')
      .filter((row) => row.includes('<th scope="row">'))
    expect(rows).toHaveLength(3)
    expect(rows[0]).toContain('<th scope="row"><code>certificate-expired</code></th>')
    expect(rows[0]).toContain('<td><code>2001:db8:abcd:12::1</code></td>')
    expect(rows[0]).toContain(`<td><code>mx1.${ALPHA}</code></td>`)
    expect(rows[0]).toContain('<td class="num">100</td>')
    expect(rows[1]).toContain('<code>starttls-not-supported</code>')
    expect(rows[1]).toContain(
      `<td><code>mx1.${ALPHA}</code><br><span class="muted">HELO</span> <code>mx1-helo.${ALPHA}</code><br><code>203.0.113.56</code></td>`,
    )
    expect(rows[1]).toContain('<td class="num">200</td>')
    expect(rows[1]).toContain('<td>https://reports.example/why?a=1&amp;b=&lt;2&gt;</td>')
    expect(rows[2]).toContain('<code>validation-failure</code>')
    expect(rows[2]).toContain('<td><code>198.51.100.62</code></td>')
    expect(rows[2]).toContain('<td><code>203.0.113.58</code></td>')
    expect(rows[2]).toContain('<td class="num">3</td>')
    expect(rows[2]).toContain('<td><code>X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED</code></td>')

    expect(second).toContain(`Policy 2: No policy found for ${ALPHA}</h2>`)
    expect(second).toContain('<dt>Successful sessions</dt><dd>50</dd>')
    expect(second).toContain('<dt>Success rate</dt><dd>100.0%</dd>')
    expect(second).toContain('No failure details reported for this policy.')
    expect(html).not.toMatch(/style="/)
  })

  test('another account’s, unknown or malformed ids are a 404 page; it needs a session', async () => {
    const cases: [FormClient, string][] = [
      [owner, `/reports/tls/${ids.foreignTls}`],
      [other, `/reports/tls/${ids.tls}`],
      [owner, '/reports/tls/9999999999'],
      [owner, '/reports/tls/0'],
      [owner, '/reports/tls/abc'],
      [owner, '/reports/tls/12x'],
    ]
    for (const [client, path] of cases) {
      const page = await client.get(path)
      expect(page.status).toBe(404)
      expect(page.html).toContain('Report not found')
      expect(page.html).toContain('This TLS report is not in your account.')
      expect(page.html).not.toContain('company-')
    }
    expect((await other.get(`/reports/tls/${ids.foreignTls}`)).html).toContain(
      '<h1>TLS report from company-y.example</h1>',
    )
    const away = await formClient(t).get(`/reports/tls/${ids.tls}`)
    expect(away.status).toBe(303)
    expect(away.location).toStartWith('/login?next=')
  })
})

describe('periods (issue #17)', () => {
  const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

  test('the period selector shows a chosen from/to range, not the first "last N days"', async () => {
    const from = dayOf(today - 200 * DAY)
    const to = dayOf(today)
    const page = await owner.get(`/reports/list?from=${from}&to=${to}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain(`<option value="custom" selected>${from} to ${to}</option>`)
    expect(page.html).not.toMatch(/<option value="\d+" selected>/)
    expect(page.html).toContain('2 reports for all domains')
    // A `days` period has no custom option.
    const days = await owner.get('/reports/list?days=30')
    expect(days.html).toContain('<option value="30" selected>last 30 days</option>')
    expect(days.html).not.toContain('value="custom"')
  })

  test('a year (366 days) is accepted; 367 falls back to 30 days and says why', async () => {
    const year = await owner.get(`/reports/list?from=${dayOf(today - 365 * DAY)}&to=${dayOf(today)}`)
    expect(year.html).not.toContain('role="alert"')
    const tooLong = await owner.get(`/reports/list?from=${dayOf(today - 366 * DAY)}&to=${dayOf(today)}`)
    expect(tooLong.html).toContain('role="alert"')
    expect(tooLong.html).toContain('spans 367 days; at most 366.')
  })

  test('an empty period offers the 30 days ending on the latest report', async () => {
    const latest = dayOf(today - 2 * DAY) // shared.example's only report of this account
    const empty = await owner.get(
      `/reports/list?domain=${SHARED}&days=7&from=${dayOf(today - 90 * DAY)}&to=${dayOf(today - 60 * DAY)}`,
    )
    expect(empty.html).toContain('0 reports for shared.example')
    const from = dayOf(today - 2 * DAY - 29 * DAY)
    const href = `/reports/list?domain=${SHARED}&amp;from=${from}&amp;to=${latest}`
    expect(empty.html).toContain('data-latest-report')
    expect(empty.html).toContain(`<a href="${href}">Show ${from} to ${latest}</a>`)
    const jumped = await owner.get(href.replaceAll('&amp;', '&'))
    expect(jumped.html).toContain('1 report for shared.example')
    expect(jumped.html).toContain('shared-receiver.example')
    // All domains: the account's latest report (alpha's, yesterday).
    const all = await owner.get(`/reports/list?from=${dayOf(today - 90 * DAY)}&to=${dayOf(today - 60 * DAY)}`)
    expect(all.html).toContain(`to=${dayOf(today - DAY)}"`)
    // Periods with reports offer nothing.
    expect((await owner.get('/reports/list')).html).not.toContain('data-latest-report')
  })
})
