import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Report intake end to end: real report emails from many providers through the HTTP intake, the
// pg-boss job, the parser and storage, read back through the reports API.

const AGG = 'tests/fixtures/dmarc-aggregate'
const FORENSIC = 'tests/fixtures/dmarc-forensic'
const fixtures = [
  `${AGG}/mox/google.eml`,
  `${AGG}/mox/mailru.eml`,
  `${AGG}/mox/outlook.eml`,
  `${AGG}/mox/xs4all.eml`,
  `${AGG}/mox/yahoo.eml`,
  `${AGG}/parsedmarc/aggregate/Report domain- borschow.com Submitter- google.com Report-ID- 949348866075514174.eml`,
  `${AGG}/parsedmarc/aggregate/twilight.eml`,
  `${AGG}/parsedmarc/aggregate/mimecast-weird-gzip.eml`,
  ...[100, 101, 102, 103, 104].map((n) => `${AGG}/stalwart-mail-auth/${n}.eml`),
]

let t: TestApp
let owner: TestAccount
let address: string

const bytes = async (path: string) => new Uint8Array(await Bun.file(path).arrayBuffer())
const db = () => t.db.database.db

async function post(
  raw: Uint8Array | string,
  options: { token?: string | null; query?: string; headers?: Record<string, string> } = {},
) {
  const headers = new Headers({ 'content-type': 'message/rfc822', ...options.headers })
  if (options.token !== null) headers.set('authorization', `Bearer ${options.token ?? owner.token}`)
  const response = await t.app.handle(
    new Request(`http://localhost/api/v1/ingest/messages${options.query ?? ''}`, {
      method: 'POST',
      headers,
      body: raw as BodyInit,
    }),
  )
  return { status: response.status, body: await response.json() }
}

async function settled(id: string): Promise<{ status: string; code: string | null; outcome: any }> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const rows = rowsOf<{ status: string; code: string | null; outcome: any }>(
      await db().execute(
        sql`select status, quarantine_code as code, outcome from ingest_messages where id = ${id}`,
      ),
    )
    if (rows[0] && rows[0].status !== 'pending') return rows[0]
    await Bun.sleep(50)
  }
  throw new Error(`message ${id} was not processed in time`)
}

async function verify(name: string) {
  await db().execute(
    sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${name}`,
  )
}

beforeAll(async () => {
  t = await startTestApp(
    {
      RATE_LIMIT_API_PER_MINUTE: '10000',
      INGEST_SECRET: 'intake-secret-for-tests',
      INGEST_DOMAIN: 'in.dmarcwatch.test',
    },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  address = (await t.request('GET', '/api/v1/ingest/address', { token: owner.token })).body.data.address
  for (const name of [
    'ueber.net',
    'borschow.com',
    'twlnet.com',
    'ab.id.au',
    'stalw.art',
    'domain.de',
    'example.com',
    'cardinal.com',
  ]) {
    await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: name } })
    await verify(name)
  }
}, 60_000)
afterAll(() => t.close())

describe('aggregate reports', () => {
  test('real reports from many providers are stored with their records and figures', async () => {
    const ids: string[] = []
    for (const path of fixtures) {
      const res = await post(await bytes(path))
      expect(res.status).toBe(202)
      expect(res.body.data.status).toBe('accepted')
      ids.push(res.body.data.id)
    }
    for (const id of ids) expect((await settled(id)).status).toBe('processed')

    const ueber = await t.request(
      'GET',
      '/api/v1/domains/ueber.net/reports?days=90&from=2019-01-01&to=2019-03-31',
      { token: owner.token },
    )
    expect(ueber.status).toBe(400) // days and from/to together are refused
    const all = rowsOf<{ domain: string; reports: number; messages: number }>(
      await db().execute(sql`select d.name as domain, count(*)::int as reports, sum(a.message_count)::int as messages
        from aggregate_reports a join domains d on d.id = a.domain_id group by d.name order by d.name`),
    )
    expect(all).toEqual([
      { domain: 'ab.id.au', reports: 1, messages: 1 },
      { domain: 'borschow.com', reports: 1, messages: 1 },
      { domain: 'stalw.art', reports: 5, messages: 5 },
      { domain: 'twlnet.com', reports: 1, messages: 1 },
      { domain: 'ueber.net', reports: 5, messages: 10 },
    ])
  }, 60_000)

  test('the reports API lists a domain’s reports and a report with its records', async () => {
    const list = await t.request('GET', '/api/v1/domains/ueber.net/reports?from=2019-01-01&to=2019-03-31', {
      token: owner.token,
    })
    expect(list.status).toBe(200)
    // The mox samples span 2019-2021; take the whole stored set through the database for the id.
    const [row] = rowsOf<{ id: string; begin: string }>(
      await db().execute(sql`select a.id, to_char(a.begin_at, 'YYYY-MM-DD') as begin from aggregate_reports a
        where a.reporter_org = 'google.com' and a.policy_domain = 'ueber.net'`),
    )
    const begin = row!.begin
    const window = await t.request('GET', `/api/v1/domains/ueber.net/reports?from=${begin}&to=${begin}`, {
      token: owner.token,
    })
    expect(window.body.data.map((r: { reporter: { org_name: string } }) => r.reporter.org_name)).toContain(
      'google.com',
    )
    const detail = await t.request('GET', `/api/v1/domains/ueber.net/reports/${row!.id}`, {
      token: owner.token,
    })
    expect(detail.status).toBe(200)
    expect(detail.body.data).toMatchObject({
      report_id: '13488712042596170873',
      record_count: 2,
      message_count: 5,
    })
    expect(detail.body.data.records).toHaveLength(2)
    expect(detail.body.meta.total).toBe(2)
    const record = detail.body.data.records[0]
    expect(record).toMatchObject({ source_ip: expect.any(String), count: expect.any(Number) })
    expect(typeof record.dkim_aligned).toBe('boolean')
    expect(Array.isArray(record.dkim)).toBe(true)
  })

  test('DKIM selectors seen in reports are remembered for the posture checks', async () => {
    const { stores } = await import('../../src/compose.ts')
    const learned = await stores(t.db.database).reports.learnedSelectors(owner.accountId, 'stalw.art')
    const seen = rowsOf<{ selector: string }>(
      await db().execute(sql`select distinct s.selector from dkim_selectors_seen s join domains d on d.id = s.domain_id
        where d.name = 'stalw.art' and s.signing_domain = 'stalw.art'`),
    ).map((r) => r.selector)
    expect(seen.length).toBeGreaterThan(0)
    expect(learned.sort()).toEqual(seen.sort())
  })

  test('a report received again is acknowledged and counted, not stored twice', async () => {
    const before = rowsOf<{ n: number }>(
      await db().execute(sql`select sum(messages)::int as n from daily_rollups`),
    )[0]!.n
    const res = await post(await bytes(fixtures[0]!))
    const message = await settled(res.body.data.id)
    expect(message.status).toBe('processed')
    expect(message.outcome[0]).toMatchObject({ status: 'duplicate', kind: 'aggregate' })
    const after = rowsOf<{ n: number }>(
      await db().execute(sql`select sum(messages)::int as n from daily_rollups`),
    )[0]!.n
    expect(after).toBe(before)
    const dup = rowsOf<{ duplicates_seen: number }>(
      await db().execute(
        sql`select duplicates_seen from aggregate_reports where report_id = '13488712042596170873'`,
      ),
    )
    expect(dup).toEqual([{ duplicates_seen: 1 }])
  })

  test('the overview and domain summary are weighted by count', async () => {
    const overview = await t.request('GET', '/api/v1/dmarc-reports/overview?from=2019-01-01&to=2019-03-31', {
      token: owner.token,
    })
    expect(overview.status).toBe(200)
    expect(overview.body.data.policy_distribution.length).toBeGreaterThan(0)
    const totals = rowsOf<{ messages: number; pass: number }>(
      await db().execute(sql`select sum(count)::int as messages, (sum(count) filter (where dmarc_pass))::int as pass
        from aggregate_records r join domains d on d.id = r.domain_id where d.name = 'stalw.art'`),
    )[0]!
    const days = rowsOf<{ first: string; last: string }>(
      await db().execute(sql`select min(day)::text as first, max(day)::text as last from aggregate_records r
        join domains d on d.id = r.domain_id where d.name = 'stalw.art'`),
    )[0]!
    const summary = await t.request(
      'GET',
      `/api/v1/dmarc-reports/domains/stalw.art/summary?from=${days.first}&to=${days.last}`,
      { token: owner.token },
    )
    expect(summary.status).toBe(200)
    expect(summary.body.data.totals.messages).toBe(totals.messages)
    expect(summary.body.data.totals.dmarc_pass).toBe(totals.pass)
    expect(summary.body.data.reporters.length).toBeGreaterThan(0)
  })
})

describe('routing and quarantine', () => {
  test('the intake secret routes by recipient; unknown recipients are refused', async () => {
    const raw = await bytes(`${AGG}/parsedmarc/aggregate/twilight.eml`)
    const unknown = await post(raw, {
      token: 'intake-secret-for-tests',
      query: '?recipient=nobody%40in.dmarcwatch.test',
    })
    expect(unknown.status).toBe(404)
    const missing = await post(raw, { token: 'intake-secret-for-tests' })
    expect(missing.status).toBe(400)
    const ok = await post(raw, {
      token: 'intake-secret-for-tests',
      headers: { 'x-original-to': `Reports <${address.toUpperCase()}>` },
    })
    expect(ok.status).toBe(202)
    expect((await settled(ok.body.data.id)).outcome[0].status).toBe('duplicate')
    const noAuth = await post(raw, { token: null })
    expect(noAuth.status).toBe(401)
  })

  test('a message without a report is quarantined with the reason, listed, and can be retried', async () => {
    const res = await post(
      'From: someone@example.org\r\nTo: x@in.dmarcwatch.test\r\nSubject: hello\r\n\r\njust text\r\n',
    )
    const message = await settled(res.body.data.id)
    expect(message).toMatchObject({ status: 'quarantined', code: 'no_report_found' })
    const list = await t.request('GET', '/api/v1/ingest/quarantine', { token: owner.token })
    expect(list.body.data[0]).toMatchObject({
      id: res.body.data.id,
      code: 'no_report_found',
      reason: expect.any(String),
    })
    const retry = await t.request('POST', `/api/v1/ingest/quarantine/${res.body.data.id}/retry`, {
      token: owner.token,
    })
    expect(retry.body.data.status).toBe('pending')
    expect((await settled(res.body.data.id)).status).toBe('quarantined')
  })

  test('a report for an unverified domain waits in quarantine until the domain is verified', async () => {
    await db().execute(
      sql`update domains set verified_at = null where account_id = ${owner.accountId} and name = 'cardinal.com'`,
    )
    const raw = await bytes(`${FORENSIC}/parsedmarc/[Netease DMARC Failure Report] Rent Reminder.eml`)
    const res = await post(raw)
    expect(await settled(res.body.data.id)).toMatchObject({
      status: 'quarantined',
      code: 'domain_not_verified',
    })
    await verify('cardinal.com')
    await t.request('POST', `/api/v1/ingest/quarantine/${res.body.data.id}/retry`, { token: owner.token })
    expect((await settled(res.body.data.id)).status).toBe('processed')
  })

  test('a large message is spooled, stored in pieces, streamed by the worker and its report stored', async () => {
    // The Yahoo fixture's report, plus 5 MB of attachments that are no report: over one piece.
    const report = new TextDecoder().decode(await bytes(`${AGG}/mox/yahoo.eml`))
    const boundary = /boundary="?([^";\r\n]+)"?/i.exec(report)![1]!
    const filler = Buffer.alloc(4 * 1024 * 1024, 7)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n')
    const padding = `--${boundary}\r\nContent-Type: application/pdf; name="scan.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\n${filler}\r\n`
    const large = report.replace(`--${boundary}--`, `${padding}--${boundary}--`)
    expect(large.length).toBeGreaterThan(5 * 1024 * 1024)
    await db().execute(sql`delete from aggregate_reports where report_id = '1559613526.307161'`)
    const res = await post(large)
    expect(res.status).toBe(202)
    const stored = rowsOf<{ raw: boolean; pieces: number; size: number; rows: number }>(
      await db().execute(sql`select raw is null as raw, pieces, size,
        (select count(*)::int from ingest_message_pieces p where p.message_id = m.id) as rows
        from ingest_messages m where id = ${res.body.data.id}`),
    )[0]!
    expect(stored).toEqual({ raw: true, pieces: 6, size: large.length, rows: 6 })
    expect(await settled(res.body.data.id)).toMatchObject({
      status: 'processed',
      outcome: [{ status: 'stored', kind: 'aggregate', detail: { report_id: '1559613526.307161' } }],
    })
  })

  test('empty and oversize messages are refused at intake', async () => {
    expect((await post('')).status).toBe(400)
  })
})

describe('failure (forensic) reports', () => {
  test('ARF and plain-text failure reports are stored redacted and listed', async () => {
    for (const name of [
      'DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml',
      'dmarc_ruf_report_linkedin.eml',
      'exim_plain_text_only_no_arf_part.eml',
    ]) {
      const res = await post(await bytes(`${FORENSIC}/parsedmarc/${name}`))
      expect((await settled(res.body.data.id)).status).toBe('processed')
    }
    const list = await t.request('GET', '/api/v1/dmarc-reports/forensic/reports', { token: owner.token })
    expect(list.status).toBe(200)
    expect(list.body.meta.total).toBe(4)
    const german = list.body.data.find((r: { domain: string }) => r.domain === 'domain.de')
    expect(german).toMatchObject({ source_ip: '10.10.10.10', auth_failure: 'dmarc', redacted: true })
    expect(JSON.stringify(german.report)).not.toContain('sharepoint@')
    expect(JSON.stringify(german.report)).toContain('@domain.de')
    const filtered = await t.request('GET', '/api/v1/dmarc-reports/forensic/reports?domain=domain.de', {
      token: owner.token,
    })
    expect(filtered.body.meta.total).toBe(1)
    const one = await t.request('GET', `/api/v1/dmarc-reports/forensic/reports/${german.id}`, {
      token: owner.token,
    })
    expect(one.body.data.id).toBe(german.id)
  }, 30_000)
})

describe('TLS-RPT', () => {
  test('a gzip TLS-RPT report attached to an email is stored and summarised', async () => {
    const report = {
      'organization-name': 'Company-X',
      'date-range': { 'start-datetime': '2026-11-20T00:00:00Z', 'end-datetime': '2026-11-20T23:59:59Z' },
      'contact-info': 'sts-reporting@company-x.example',
      'report-id': '5065427c-23d3-47ca-b6e0-946ea0e8c4be',
      policies: [
        {
          policy: {
            'policy-type': 'sts',
            'policy-string': ['version: STSv1', 'mode: testing'],
            'policy-domain': 'example.com',
            'mx-host': ['*.mail.example.com'],
          },
          summary: { 'total-successful-session-count': 5326, 'total-failure-session-count': 303 },
          'failure-details': [
            {
              'result-type': 'certificate-expired',
              'sending-mta-ip': '2001:db8:abcd:0012::1',
              'receiving-mx-hostname': 'mx1.mail.example.com',
              'failed-session-count': 100,
            },
          ],
        },
      ],
    }
    const gz = Buffer.from(Bun.gzipSync(new TextEncoder().encode(JSON.stringify(report)))).toString('base64')
    const raw = [
      'From: tlsrpt@company-x.example',
      `To: ${address}`,
      'Subject: Report Domain: example.com Submitter: company-x.example Report-ID: <5065427c>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=tlsrpt; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'TLS report',
      '--b1',
      'Content-Type: application/tlsrpt+gzip; name="company-x.example!example.com!1795564800!1795651199.json.gz"',
      'Content-Transfer-Encoding: base64',
      '',
      gz,
      '--b1--',
      '',
    ].join('\r\n')
    const res = await post(raw)
    expect((await settled(res.body.data.id)).status).toBe('processed')
    const summary = await t.request(
      'GET',
      '/api/v1/domains/example.com/tls-reports?from=2026-11-19&to=2026-11-21',
      { token: owner.token },
    )
    expect(summary.status).toBe(200)
    expect(summary.body.data.totals).toEqual({ successful_sessions: 5326, failed_sessions: 303, reports: 1 })
    expect(summary.body.data.failure_types).toEqual([{ result_type: 'certificate-expired', sessions: 100 }])

    // The same report over HTTPS (RFC 8460 §6.4) is a duplicate; a new one, gzipped, is stored.
    const send = (body: Uint8Array | string, type: string) =>
      t.app.handle(
        new Request('http://localhost/api/v1/ingest/tls-rpt', {
          method: 'POST',
          headers: { authorization: `Bearer ${owner.token}`, 'content-type': type },
          body: body as BodyInit,
        }),
      )
    const again = await send(JSON.stringify(report), 'application/tlsrpt+json')
    expect(again.status).toBe(200)
    expect((await again.json()).data.status).toBe('duplicate')
    const fresh = await send(
      Bun.gzipSync(new TextEncoder().encode(JSON.stringify({ ...report, 'report-id': 'second' }))),
      'application/tlsrpt+gzip',
    )
    expect(fresh.status).toBe(201)
    const broken = await send('{"organization-name": 1}', 'application/tlsrpt+json')
    expect(broken.status).toBe(400)
    const bomb = await send(Bun.gzipSync(new Uint8Array(64 * 1024 * 1024)), 'application/tlsrpt+gzip')
    expect(bomb.status).toBe(400)
    expect((await bomb.json()).message).toContain('limit')
  })
})
