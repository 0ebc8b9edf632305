import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// POST /api/v1/ingest/reports: bare report files (real samples, tests/fixtures/*/SOURCES.md) through
// the mail pipeline, processed before the answer: stored, duplicate, quarantined, refused.

const AGG = 'tests/fixtures/dmarc-aggregate/parsedmarc'
const TLS = 'tests/fixtures/tls-rpt/rfc8460-example.json'
const MAX = 2 * 1024 * 1024

let t: TestApp
let owner: TestAccount

const bytes = async (path: string) => new Uint8Array(await Bun.file(path).arrayBuffer())
const db = () => t.db.database.db

async function upload(
  body: BodyInit | null,
  options: { token?: string | null; type?: string; headers?: Record<string, string> } = {},
) {
  const headers = new Headers({
    'content-type': options.type ?? 'application/octet-stream',
    ...options.headers,
  })
  if (options.token !== null) headers.set('authorization', `Bearer ${options.token ?? owner.token}`)
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/reports', { method: 'POST', headers, body }),
  )
  return { status: response.status, body: (await response.json()) as any }
}

async function addDomain(name: string, verified = true) {
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: name } })
  if (verified)
    await db().execute(
      sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${name}`,
    )
}

beforeAll(async () => {
  t = await startTestApp(
    { RATE_LIMIT_API_PER_MINUTE: '10000', INGEST_MAX_MESSAGE_BYTES: String(MAX) },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  await addDomain('example.com')
  await addDomain('company-y.example')
  await addDomain('example.de', false)
}, 60_000)
afterAll(() => t.close())

describe('each kind of report file', () => {
  test('aggregate XML is stored at once, with what was stored', async () => {
    const res = await upload(
      await bytes(`${AGG}/aggregate/example.net!example.com!1529366400!1529452799.xml`),
      {
        type: 'text/xml',
      },
    )
    expect(res.status).toBe(201)
    // Read before toMatchObject: Bun's asymmetric matchers write themselves into the received object.
    const reportId = res.body.data.reports[0].id
    const messageId = res.body.data.id
    expect(typeof reportId).toBe('number')
    expect(res.body.data).toMatchObject({
      id: expect.any(String),
      status: 'stored',
      quarantine: null,
      reports: [
        {
          status: 'stored',
          kind: 'aggregate',
          id: expect.any(Number),
          report_id: 'b043f0e264cf4ea995e93765242f6dfb',
          domain: 'example.com',
          reporter: expect.any(String),
          records: expect.any(Number),
        },
      ],
    })
    const stored = await t.request('GET', `/api/v1/domains/example.com/reports/${reportId}`, {
      token: owner.token,
    })
    expect(stored.status).toBe(200)
    expect(stored.body.data.report_id).toBe('b043f0e264cf4ea995e93765242f6dfb')
    // The intake message is processed already (no queue round trip).
    const [row] = rowsOf<{ status: string; source: string }>(
      await db().execute(sql`select status, source from ingest_messages where id = ${messageId}`),
    )
    expect(row).toEqual({ status: 'processed', source: 'http' })
    // Its job waits out the inline run (a fallback for a caller that died): due now, the worker
    // would process the message alongside the request and count its duplicates twice.
    const [job] = rowsOf<{ due_in: number }>(
      await db().execute(sql`select extract(epoch from start_after - now())::int as due_in from pgboss.job
        where name = 'ingest.process-message' and data->>'messageId' = ${messageId}`),
    )
    expect(job!.due_in).toBeGreaterThan(14 * 60)
  })

  test('gzip is stored; the same report as XML and as zip is a duplicate (content is what counts)', async () => {
    const gz = await upload(await bytes(`${AGG}/extract_report/nice-input.xml.gz`), {
      type: 'application/gzip',
    })
    expect(gz.status).toBe(201)
    expect(gz.body.data.reports[0]).toMatchObject({ status: 'stored', report_id: '11038226378739404135' })
    const xml = await upload(await bytes(`${AGG}/extract_report/nice-input.xml`))
    expect(xml.status).toBe(200)
    expect(xml.body.data).toMatchObject({
      status: 'duplicate',
      reports: [{ status: 'duplicate', kind: 'aggregate' }],
    })
    // The Content-Type is ignored: a zip sent as text is still a zip.
    const zip = await upload(await bytes(`${AGG}/extract_report/nice-input.xml.zip`), { type: 'text/plain' })
    expect(zip.status).toBe(200)
    expect(zip.body.data.status).toBe('duplicate')
    expect(zip.body.data.reports[0].id).toBe(gz.body.data.reports[0].id)
    const [counted] = rowsOf<{ duplicates_seen: number }>(
      await db().execute(
        // By the stored row's id: other tests of this file store the same report in other accounts.
        sql`select duplicates_seen from aggregate_reports where id = ${gz.body.data.reports[0].id}`,
      ),
    )
    expect(counted).toEqual({ duplicates_seen: 2 })
  })

  test('a zip from a real reporter is stored', async () => {
    const res = await upload(
      await bytes(
        `${AGG}/aggregate/estadocuenta1.infonacot.gob.mx!example.com!1536853302!1536939702!2940.xml.zip`,
      ),
    )
    expect(res.status).toBe(201)
    expect(res.body.data.reports[0]).toMatchObject({ kind: 'aggregate', domain: 'example.com' })
  })

  test('TLS-RPT JSON is stored; gzipped again it is a duplicate', async () => {
    const json = await bytes(TLS)
    const res = await upload(json, { type: 'application/tlsrpt+json' })
    expect(res.status).toBe(201)
    expect(res.body.data.reports[0]).toMatchObject({
      status: 'stored',
      kind: 'tls-rpt',
      report_id: '5065427c-23d3-47ca-b6e0-946ea0e8c4be',
      domain: 'company-y.example',
    })
    const again = await upload(Bun.gzipSync(json))
    expect(again.status).toBe(200)
    expect(again.body.data.status).toBe('duplicate')
  })
})

describe('quarantine and refusals', () => {
  test('a report for a domain not in the account is quarantined like mail, and a retry stores it later', async () => {
    const res = await upload(
      await bytes(`${AGG}/aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz`),
    )
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      status: 'quarantined',
      quarantine: { code: 'domain_not_in_account', message: expect.stringContaining('indemed.com') },
      reports: [{ status: 'quarantined', code: 'domain_not_in_account' }],
    })
    const list = await t.request('GET', '/api/v1/ingest/quarantine', { token: owner.token })
    expect(list.body.data.map((m: { id: string }) => m.id)).toContain(res.body.data.id)

    // The queued job reads a bare report too (docs/ingestion.md): retried after adding the domain.
    await addDomain('indemed.com')
    const retry = await t.request('POST', `/api/v1/ingest/quarantine/${res.body.data.id}/retry`, {
      token: owner.token,
    })
    expect(retry.status).toBe(200)
    const deadline = Date.now() + 20_000
    let status = 'pending'
    while (status === 'pending' && Date.now() < deadline) {
      await Bun.sleep(50)
      status = rowsOf<{ status: string }>(
        await db().execute(sql`select status from ingest_messages where id = ${res.body.data.id}`),
      )[0]!.status
    }
    expect(status).toBe('processed')
  }, 30_000)

  test('an unverified domain and a broken report are quarantined with their reason', async () => {
    const unverified = await upload(
      await bytes(`${AGG}/aggregate/ikea.com!example.de!1538690400!1538776800.xml`),
    )
    expect(unverified.body.data).toMatchObject({
      status: 'quarantined',
      quarantine: { code: 'domain_not_verified' },
    })
    const truncated = await upload('<?xml version="1.0"?><feedback><report_metadata><org_name>x')
    expect(truncated.status).toBe(200)
    expect(truncated.body.data.status).toBe('quarantined')
    expect(truncated.body.data.quarantine.code).not.toBe('no_report_found')
    const corrupt = await upload(new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5]))
    expect(corrupt.body.data).toMatchObject({
      status: 'quarantined',
      quarantine: { code: 'decompression_failed' },
    })
    const empty = await upload(await bytes('tests/fixtures/dmarc-aggregate/parsedmarc/empty.xml'))
    expect(empty.status).toBe(400)
  })

  test('junk is refused with a clear 400 and not stored', async () => {
    const before = rowsOf<{ n: number }>(
      await db().execute(sql`select count(*)::int as n from ingest_messages`),
    )[0]!
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])
    for (const body of [png, 'hello, this is not a report', '<html><body>no</body></html>']) {
      const res = await upload(body)
      expect(res.status).toBe(400)
      expect(res.body.errors.body[0]).toContain('not a report file')
    }
    // An email is not a bare report: it has its own endpoint.
    const mail = await upload(await bytes('tests/fixtures/dmarc-aggregate/mox/google.eml'))
    expect(mail.status).toBe(400)
    expect(mail.body.message).toContain('/ingest/messages')
    const after = rowsOf<{ n: number }>(
      await db().execute(sql`select count(*)::int as n from ingest_messages`),
    )[0]!
    expect(after.n).toBe(before.n)
  })

  test('over INGEST_MAX_MESSAGE_BYTES is 413, by Content-Length or while streaming', async () => {
    const big = new Uint8Array(MAX + 1)
    big.set(new TextEncoder().encode('<?xml version="1.0"?><feedback>'))
    expect((await upload(big)).status).toBe(413)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(big.subarray(0, MAX / 2 + 1))
        controller.close()
      },
    })
    const chunked = await upload(stream)
    expect(chunked.status).toBe(413)
    expect(chunked.body.error).toBe('payload_too_large')
  })

  test('another account’s token cannot put a report into this account', async () => {
    const stranger = await t.account()
    const res = await upload(
      await bytes(`${AGG}/aggregate/protection.outlook.com!example.com!1711756800!1711843200.xml`),
      { token: stranger.token },
    )
    expect(res.status).toBe(200)
    expect(res.body.data.quarantine.code).toBe('domain_not_in_account')
    const stored = rowsOf<{ n: number }>(
      await db().execute(
        sql`select count(*)::int as n from aggregate_reports where report_id = 'cfeafefe4129445e8c81018bd9177197'`,
      ),
    )[0]!
    expect(stored.n).toBe(0)
    const theirs = await t.request('GET', '/api/v1/ingest/quarantine', { token: stranger.token })
    expect(theirs.body.data.map((m: { id: string }) => m.id)).toEqual([res.body.data.id])
    const ours = await t.request('GET', '/api/v1/ingest/quarantine', { token: owner.token })
    expect(ours.body.data.map((m: { id: string }) => m.id)).not.toContain(res.body.data.id)
  })

  test('a bare report posted as an email is read too (it used to be quarantined no_report_found)', async () => {
    const response = await t.app.handle(
      new Request('http://localhost/api/v1/ingest/messages', {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'message/rfc822' },
        body: await bytes(`${AGG}/aggregate/usssa.com!example.com!1538784000!1538870399.xml`),
      }),
    )
    expect(response.status).toBe(202)
    const id = ((await response.json()) as { data: { id: string } }).data.id
    const deadline = Date.now() + 20_000
    let row: { status: string; outcome: { status: string; kind: string }[] } | undefined
    while (Date.now() < deadline) {
      row = rowsOf<NonNullable<typeof row>>(
        await db().execute(sql`select status, outcome from ingest_messages where id = ${id}`),
      )[0]
      if (row?.status !== 'pending') break
      await Bun.sleep(50)
    }
    expect(row?.status).toBe('processed')
    expect(row?.outcome[0]).toMatchObject({ status: 'stored', kind: 'aggregate' })
  }, 30_000)

  test('needs the account token', async () => {
    expect((await upload(await bytes(TLS), { token: null })).status).toBe(401)
    expect((await upload(await bytes(TLS), { token: 'dw_wrong' })).status).toBe(401)
  })

  test('OpenAPI shows the endpoint and its outcomes', async () => {
    const spec = (await t.request('GET', '/openapi/json')).body
    const op = spec.paths['/api/v1/ingest/reports'].post
    expect(Object.keys(op.responses)).toEqual(
      expect.arrayContaining(['200', '201', '202', '400', '401', '413']),
    )
    expect(op.summary).toContain('report file')
  })
})

describe('values PostgreSQL refuses', () => {
  test('a raw NUL in an aggregate report is stored as U+FFFD; a count past 2^31 - 1 is quarantined with the reason', async () => {
    const xml = new TextDecoder().decode(
      await bytes(`${AGG}/aggregate/example.net!example.com!1529366400!1529452799.xml`),
    )
    const withNul = xml
      .replace('<org_name>', '<org_name>N\u0000UL ')
      .replace('<report_id>', '<report_id>nul-')
    const stored = await upload(new TextEncoder().encode(withNul))
    expect(stored.status).toBe(201)
    expect(stored.body.data.reports[0]).toMatchObject({ status: 'stored', kind: 'aggregate' })
    const huge = xml
      .replace(/<count>\d+<\/count>/, '<count>3000000000</count>')
      .replace('<report_id>', '<report_id>huge-')
    const refused = await upload(new TextEncoder().encode(huge))
    expect(refused.status).toBeLessThan(500)
    expect(JSON.stringify(refused.body)).toContain('2147483647')
  })

  test('a NUL escaped in a TLS-RPT report is stored as U+FFFD (jsonb refuses the escape)', async () => {
    const json = JSON.parse(new TextDecoder().decode(await bytes(TLS)))
    json['organization-name'] = 'Company\u0000-X'
    json['report-id'] = 'nul-escaped'
    const res = await upload(new TextEncoder().encode(JSON.stringify(json)), {
      type: 'application/tlsrpt+json',
    })
    expect(res.status).toBe(201)
    expect(res.body.data.reports[0]).toMatchObject({
      status: 'stored',
      kind: 'tls-rpt',
      report_id: 'nul-escaped',
    })
    const rows = rowsOf<{ organization: string }>(
      await db().execute(sql`select organization from tls_reports where report_id = 'nul-escaped'`),
    )
    expect(rows[0]!.organization).toBe('Company\uFFFD-X')
  })

  // Found by a hostile-input sweep: a lone surrogate's escape was a 500 (jsonb refuses `\ud800`),
  // and inline processing left a job failing on every retry; other controls were stored as sent.
  test('a lone surrogate or a control character in a TLS-RPT report is stored as U+FFFD, on both routes', async () => {
    const json = JSON.parse(new TextDecoder().decode(await bytes(TLS)))
    const text = (id: string) =>
      JSON.stringify({ ...json, 'organization-name': 'O\ud800rg\u0007', 'report-id': id })
    const inline = await upload(new TextEncoder().encode(text('lone-inline')), {
      type: 'application/tlsrpt+json',
    })
    expect(inline.status).toBe(201)
    expect(inline.body.data.reports[0]).toMatchObject({ status: 'stored', kind: 'tls-rpt' })
    const direct = await t.app.handle(
      new Request('http://localhost/api/v1/ingest/tls-rpt', {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/tlsrpt+gzip' },
        body: Bun.gzipSync(new TextEncoder().encode(text('lone-direct'))),
      }),
    )
    expect(direct.status).toBe(201)
    const rows = rowsOf<{ organization: string }>(
      await db().execute(
        sql`select organization from tls_reports where report_id in ('lone-inline', 'lone-direct')`,
      ),
    )
    expect(rows.map((r) => r.organization)).toEqual(['O\uFFFDrg\uFFFD', 'O\uFFFDrg\uFFFD'])
  })
})

describe('policy domains written as U-labels', () => {
  test('a report for ß.de or full-width letters finds the domain stored as its A-label', async () => {
    await addDomain('xn--zca.de')
    const xml = new TextDecoder().decode(
      await bytes(`${AGG}/aggregate/example.net!example.com!1529366400!1529452799.xml`),
    )
    const sharp = await upload(
      new TextEncoder().encode(
        xml
          .replace(/<domain>example\.com<\/domain>/, '<domain>ß.de</domain>')
          .replace('<report_id>', '<report_id>idn-'),
      ),
    )
    expect(sharp.status).toBe(201)
    expect(sharp.body.data.reports[0]).toMatchObject({ status: 'stored', domain: 'xn--zca.de' })
    const wide = await upload(
      new TextEncoder().encode(
        xml
          .replace(/<domain>example\.com<\/domain>/, '<domain>ＥＸＡＭＰＬＥ.com.</domain>')
          .replace('<report_id>', '<report_id>wide-'),
      ),
    )
    expect(wide.status).toBe(201)
    expect(wide.body.data.reports[0]).toMatchObject({ status: 'stored', domain: 'example.com' })
    // A name that is no host name at all is still looked up as written, and not found.
    const junk = await upload(
      new TextEncoder().encode(
        xml
          .replace(/<domain>example\.com<\/domain>/, '<domain>ex ample.com</domain>')
          .replace('<report_id>', '<report_id>junk-'),
      ),
    )
    expect(junk.body.data.quarantine.code).toBe('domain_not_in_account')
  })
})
