import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { submitTlsReport } from '../support/tls-rpt-submit.ts'

// TLS-RPT date ranges and session counts through POST /ingest/tls-rpt to the stored row
// (domain/reports/tls-rpt.ts; docs/ingestion.md): every year 0001-9999 is stored as itself, an
// impossible date-time or an instant outside those years is a 400 naming the field, and counts
// are bounded so that the API's totals stay exact JSON numbers.

const DOMAIN = 'tls-values.example'

let t: TestApp
let owner: TestAccount
const db = () => t.db.database.db

function report(id: string, start: string, end: string, count = 1) {
  return {
    'organization-name': 'Reporter Inc.',
    'date-range': { 'start-datetime': start, 'end-datetime': end },
    'report-id': id,
    policies: [
      {
        policy: { 'policy-type': 'sts', 'policy-string': ['version: STSv1'], 'policy-domain': DOMAIN },
        summary: { 'total-successful-session-count': count, 'total-failure-session-count': count },
        'failure-details': [{ 'result-type': 'certificate-expired', 'failed-session-count': count }],
      },
    ],
  }
}

const submit = (body: unknown) => submitTlsReport(t, owner.token, body)

/** The stored range as PostgreSQL holds it, in UTC. */
async function storedRange(id: string) {
  const rows = rowsOf<{ begin_at: string; end_at: string }>(
    await db().execute(sql`select
        to_char(begin_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as begin_at,
        to_char(end_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as end_at
      from tls_reports where account_id = ${owner.accountId} and report_id = ${id}`),
  )
  return rows[0]
}

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  owner = await t.account()
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: DOMAIN } })
  await db().execute(
    sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${DOMAIN}`,
  )
}, 60_000)
afterAll(() => t.close())

describe('date-range', () => {
  test('years 0001-9999 are stored as themselves, the offset applied', async () => {
    const cases: [string, string, string, { begin_at: string; end_at: string }][] = [
      [
        'year-1',
        '0001-01-01T00:00:00Z',
        '0001-01-01T23:59:59Z',
        { begin_at: '0001-01-01T00:00:00Z', end_at: '0001-01-01T23:59:59Z' },
      ],
      [
        'year-50',
        '0050-06-01T00:00:00Z',
        '0050-06-01T23:59:59Z',
        { begin_at: '0050-06-01T00:00:00Z', end_at: '0050-06-01T23:59:59Z' },
      ],
      [
        'year-9999',
        '9999-12-31T00:00:59-23:59',
        '9999-12-31T23:59:59Z',
        { begin_at: '9999-12-31T23:59:59Z', end_at: '9999-12-31T23:59:59Z' },
      ],
      [
        'offsets',
        '2026-11-25T00:00:00+23:59',
        '2026-11-25T00:00:00-23:59',
        { begin_at: '2026-11-24T00:01:00Z', end_at: '2026-11-25T23:59:00Z' },
      ],
    ]
    for (const [id, start, end, stored] of cases) {
      const res = await submit(report(id, start, end))
      expect(res.status, id).toBe(201)
      expect(await storedRange(id), id).toEqual(stored)
    }
    // And read back as such: a driver's Date of "0050-06-01 00:00:00+00" is 1950.
    const summary = await t.request(
      'GET',
      `/api/v1/domains/${DOMAIN}/tls-reports?from=0050-06-01&to=0050-06-02`,
      {
        token: owner.token,
      },
    )
    expect(summary.body.data.reports.map((r: any) => [r.begin, r.end])).toEqual([
      ['0050-06-01T00:00:00.000Z', '0050-06-01T23:59:59.000Z'],
    ])
  })

  test('impossible date-times and instants outside 0001-9999 are 400, naming the field; nothing is stored', async () => {
    for (const [start, end, path] of [
      ['2026-02-31T00:00:00Z', '2026-03-31T00:00:00Z', 'date-range.start-datetime'],
      ['2026-11-25T00:00:00+99:99', '2026-11-26T00:00:00Z', 'date-range.start-datetime'],
      ['9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59Z', 'date-range.start-datetime'],
      ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59', 'date-range.end-datetime'],
      ['0001-01-01T00:00:00+00:01', '0001-01-02T00:00:00Z', 'date-range.start-datetime'],
      ['2026-11-25T00:00:00Z', '2026-11-25T01:00:00+02:00', 'date-range.end-datetime'],
    ]) {
      const res = await submit(report('refused', start!, end!))
      expect(res.status, `${start} ${end}`).toBe(400)
      expect(res.body.errors.body[0], `${start} ${end}`).toStartWith(`${path}: `)
    }
    expect(await storedRange('refused')).toBeUndefined()
  })
})

describe('session counts', () => {
  test('2^31 - 1 in every count: the totals are exact', async () => {
    const max = 2_147_483_647
    const body = report('max-counts', '2026-09-10T00:00:00Z', '2026-09-10T23:59:59Z', max)
    body.policies.push(body.policies[0]!, body.policies[0]!)
    expect((await submit(body)).status).toBe(201)
    const res = await t.request(
      'GET',
      `/api/v1/domains/${DOMAIN}/tls-reports?from=2026-09-09&to=2026-09-11`,
      {
        token: owner.token,
      },
    )
    expect(res.status).toBe(200)
    expect(res.body.data.totals).toEqual({
      successful_sessions: 3 * max,
      failed_sessions: 3 * max,
      reports: 1,
    })
    expect(res.body.data.failure_types).toEqual([{ result_type: 'certificate-expired', sessions: 3 * max }])
  })

  test('a count past 2^31 - 1 is 400 naming it', async () => {
    const res = await submit(report('too-many', '2026-09-10T00:00:00Z', '2026-09-10T23:59:59Z', 2 ** 53 - 1))
    expect(res.status).toBe(400)
    expect(res.body.errors.body).toEqual([
      'policies[0].summary.total-successful-session-count: expected an integer from 0 to 2147483647',
    ])
  })
})

describe('body size', () => {
  test('a body past 16 MB (what a report may decompress to) is 413, by Content-Length or while streaming', async () => {
    const big = new Uint8Array(16 * 1024 * 1024 + 1).fill(0x20)
    const declared = await t.app.handle(
      new Request('http://localhost/api/v1/ingest/tls-rpt', {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/tlsrpt+json' },
        body: big,
      }),
    )
    expect(declared.status).toBe(413)
    expect((await declared.json()).error).toBe('payload_too_large')
    const chunks = [big.subarray(0, 8 * 1024 * 1024), big.subarray(8 * 1024 * 1024)]
    const streamed = await t.app.handle(
      new Request('http://localhost/api/v1/ingest/tls-rpt', {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/tlsrpt+json' },
        body: new ReadableStream({
          pull(controller) {
            const next = chunks.shift()
            if (next === undefined) controller.close()
            else controller.enqueue(next)
          },
        }),
        duplex: 'half',
      } as RequestInit),
    )
    expect(streamed.status).toBe(413)
  })
})
