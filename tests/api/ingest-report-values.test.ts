import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { report } from '../domain/reports/aggregate-support.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Values the parser now refuses or rewrites, through POST /api/v1/ingest/reports (the whole mail
// pipeline, processed before the answer): a time in milliseconds is a quarantine with its reason
// (it used to reach the writer and throw there), an IPv4-mapped source is the IPv4 source, and a
// report gzipped twice is stored.

let t: TestApp
let owner: TestAccount
const db = () => t.db.database.db

async function upload(body: BodyInit) {
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/reports', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${owner.token}` },
      body,
    }),
  )
  return { status: response.status, body: (await response.json()) as any }
}

const withId = (id: string, xml = report()) =>
  xml.replace('<report_id>r1</report_id>', `<report_id>${id}</report_id>`)

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  await startWorkers(t.runtime.boss!, t.runtime)
  owner = await t.account()
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'example.com' } })
  await db().execute(sql`update domains set verified_at = now() where account_id = ${owner.accountId}`)
}, 60_000)
afterAll(() => t.close())

test('a date range in milliseconds is quarantined as invalid_value, nothing stored', async () => {
  const xml = withId('ms', report()).replace(
    '<begin>1700000000</begin><end>1700086400</end>',
    '<begin>1700000000000</begin><end>1700086400000</end>',
  )
  const res = await upload(xml)
  expect(res.status).toBe(200)
  expect(res.body.data).toMatchObject({
    status: 'quarantined',
    quarantine: {
      code: 'invalid_value',
      message: expect.stringContaining('milliseconds instead of seconds'),
    },
  })
  const stored = rowsOf<{ n: number }>(
    await db().execute(sql`select count(*)::int as n from aggregate_reports where report_id = 'ms'`),
  )
  expect(stored[0]!.n).toBe(0)
})

test('::ffff:192.0.2.1 and 192.0.2.1 are one source; a report gzipped twice is stored', async () => {
  const record = /<record>.*<\/record>/s.exec(report())![0]
  const xml = withId('mapped').replace(record, record + record.replace('192.0.2.1', '::ffff:192.0.2.1'))
  const res = await upload(Bun.gzipSync(Bun.gzipSync(new TextEncoder().encode(xml))))
  expect(res.status).toBe(201)
  expect(res.body.data.reports).toMatchObject([{ status: 'stored', report_id: 'mapped', records: 2 }])
  const sources = rowsOf<{ ip: string }>(
    await db().execute(sql`select distinct host(r.source_ip) as ip from aggregate_records r
      join aggregate_reports a on a.id = r.report_id where a.report_id = 'mapped'`),
  )
  expect(sources).toEqual([{ ip: '192.0.2.1' }])
})

test('a report in UTF-16, with and without its byte order mark, gzipped or bare, is stored', async () => {
  const utf16le = (text: string, bom: boolean) => {
    const units = (bom ? '\uFEFF' : '') + text
    const bytes = new Uint8Array(units.length * 2)
    for (let i = 0; i < units.length; i++) {
      bytes[i * 2] = units.charCodeAt(i) & 0xff
      bytes[i * 2 + 1] = units.charCodeAt(i) >> 8
    }
    return bytes
  }
  const declared = (id: string) =>
    withId(id).replace(/^<\?xml[^>]*\?>/, '<?xml version="1.0" encoding="UTF-16"?>')
  for (const [id, body] of [
    ['utf16-bom', utf16le(declared('utf16-bom'), true)],
    ['utf16-bare', utf16le(declared('utf16-bare'), false)],
    ['utf16-gz', Bun.gzipSync(utf16le(declared('utf16-gz'), true))],
  ] as const) {
    const res = await upload(body as BodyInit)
    expect({ id, status: res.status }).toEqual({ id, status: 201 })
    expect(res.body.data.reports).toMatchObject([{ status: 'stored', report_id: id }])
  }
})
