import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Issue #17, parts 5 and 6, end to end (HTTP intake, the pg-boss job, storage, the API): a year of
// history in reach (from/to up to 366 days), an empty period saying where the latest report is,
// zero-record reports in the totals, received_at as the arrival, <identities>, and the first real
// defect as the quarantine reason.

const DAY = 86_400_000
const NOW = new Date('2026-11-25T12:00:00Z')
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const TODAY = dayOf(NOW.getTime())
/** Midnight UTC n days before NOW, in Unix seconds. */
const daysAgo = (n: number) => Math.floor((NOW.getTime() - n * DAY) / DAY) * (DAY / 1000)

let t: TestApp
const db = () => t.db.database.db

function report(options: {
  domain: string
  id: string
  begin: number
  records?: string[]
  identities?: boolean
  /** Days the range covers (default 1). */
  days?: number
}) {
  const ids = options.identities ? 'identities' : 'identifiers'
  const records = (options.records ?? ['192.0.2.10:5'])
    .map((spec) => {
      const [ip, count] = spec.split(':')
      return `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
        <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
        <${ids}><header_from>${options.domain}</header_from></${ids}>
        <auth_results><dkim><domain>${options.domain}</domain><selector>s1</selector><result>pass</result></dkim>
        <spf><domain>${options.domain}</domain><result>pass</result></spf></auth_results></record>`
    })
    .join('')
  return `<?xml version="1.0"?><feedback><report_metadata><org_name>reporter.example</org_name>
    <email>dmarc@reporter.example</email><report_id>${options.id}</report_id>
    <date_range><begin>${options.begin}</begin><end>${options.begin + (options.days ?? 1) * 86_400 - 1}</end></date_range></report_metadata>
    <policy_published><domain>${options.domain}</domain><p>none</p></policy_published>${records}</feedback>`
}

const email = (xml: string, id: string) =>
  `From: dmarc@reporter.example\r\nTo: rua@example.net\r\nSubject: Report ${id}\r\nMessage-ID: <${id}@reporter.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n`

async function post(owner: TestAccount, raw: string): Promise<string> {
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/messages', {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${owner.token}` },
      body: raw,
    }),
  )
  expect(response.status).toBe(202)
  return ((await response.json()) as { data: { id: string } }).data.id
}

async function settled(id: string) {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const rows = rowsOf<{ status: string; code: string | null; reason: string | null }>(
      await db().execute(sql`select status, quarantine_code as code, quarantine_reason as reason
        from ingest_messages where id = ${id}`),
    )
    if (rows[0] && rows[0].status !== 'pending') return rows[0]
    await Bun.sleep(50)
  }
  throw new Error(`message ${id} was not processed in time`)
}

async function ownerWith(...names: string[]): Promise<TestAccount> {
  const owner = await t.account()
  for (const name of names) {
    const created = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: name },
    })
    expect(created.status).toBe(201)
    await db().execute(
      sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = ${name}`,
    )
  }
  return owner
}

const get = (owner: TestAccount, path: string) => t.request('GET', `/api/v1${path}`, { token: owner.token })

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  t.clock.now = NOW
  await startWorkers(t.runtime.boss!, t.runtime)
}, 60_000)
afterAll(() => t.close())

describe('a year of history (from/to up to 366 days)', () => {
  let owner: TestAccount
  const begin = daysAgo(300) // last winter: outside any `days` period
  const yearAgo = dayOf(NOW.getTime() - 365 * DAY) // with today: 366 days

  beforeAll(async () => {
    owner = await ownerWith('old.example', 'quiet.example')
    const id = await post(owner, email(report({ domain: 'old.example', id: 'old-1', begin }), 'old-1'))
    expect((await settled(id)).status).toBe('processed')
  }, 30_000)

  test('reports, summary, overview and sources take a 366-day from/to', async () => {
    const year = `from=${yearAgo}&to=${TODAY}`
    const list = await get(owner, `/domains/old.example/reports?${year}`)
    expect(list.status).toBe(200)
    expect(list.body.data.map((r: { report_id: string }) => r.report_id)).toEqual(['old-1'])
    expect(list.body.meta.latest_report_at).toBeUndefined()

    const summary = await get(owner, `/dmarc-reports/domains/old.example/summary?${year}`)
    expect(summary.status).toBe(200)
    expect(summary.body.data.period).toEqual({ from: yearAgo, to: TODAY })
    expect(summary.body.data.totals).toMatchObject({ messages: 5, reports: 1 })
    expect(summary.body.meta).toBeUndefined()

    const overview = await get(owner, `/dmarc-reports/overview?${year}`)
    expect(overview.status).toBe(200)
    expect(overview.body.data.totals).toMatchObject({ messages: 5, reports: 1 })

    const sources = await get(owner, `/domains/old.example/sources?${year}`)
    expect(sources.status).toBe(200)
    expect(sources.body.data.map((s: { ip: string }) => s.ip)).toEqual(['192.0.2.10'])
    expect(sources.body.meta.latest_report_at).toBeUndefined()
    const intelligence = await get(owner, `/domains/old.example/sources/intelligence?${year}`)
    expect(intelligence.status).toBe(200)
    expect(intelligence.body.meta.latest_report_at).toBeUndefined()
  })

  test('367 days, or days over 90, are a clear 400 naming the field', async () => {
    const tooLong = dayOf(NOW.getTime() - 366 * DAY)
    for (const path of [
      `/domains/old.example/reports?from=${tooLong}&to=${TODAY}`,
      `/dmarc-reports/domains/old.example/summary?from=${tooLong}&to=${TODAY}`,
      `/dmarc-reports/overview?from=${tooLong}&to=${TODAY}`,
      `/domains/old.example/sources?from=${tooLong}&to=${TODAY}`,
    ]) {
      const response = await get(owner, path)
      expect(response.status).toBe(400)
      const problem = `The period from ${tooLong} to ${TODAY} spans 367 days; at most 366.`
      expect(response.body).toEqual({ message: problem, errors: { to: [problem] } })
    }
    const days = await get(owner, '/dmarc-reports/overview?days=91')
    expect(days.status).toBe(400)
    expect(Object.keys(days.body.errors)).toEqual(['days'])
  })

  // Found by a hostile-input sweep: the ends of the calendar were a 500 (9999-12 after ~5 s of
  // CPU in the month loop; 0001-01 through a margin naming year 0). domain/reports/period.ts.
  test('periods at the ends of the years 1-9999 answer at once, and year 0 is a 400', async () => {
    for (const range of [
      'from=9999-12-01&to=9999-12-31',
      'from=9999-01-15&to=9999-12-31',
      'from=0001-01-01&to=0001-01-31',
    ]) {
      for (const path of [
        `/dmarc-reports/overview?${range}`,
        `/dmarc-reports/domains/old.example/summary?${range}`,
        `/domains/old.example/reports?${range}`,
        `/domains/old.example/sources?${range}`,
      ]) {
        const started = performance.now()
        const response = await get(owner, path)
        expect([path, response.status]).toEqual([path, 200])
        expect(performance.now() - started).toBeLessThan(2000)
      }
    }
    const zero = await get(owner, '/dmarc-reports/overview?from=0000-06-01&to=0000-06-30')
    expect(zero.status).toBe(400)
    expect(Object.keys(zero.body.errors)).toEqual(['from'])
  })

  test('an empty period says where the latest report begins, for the domain and for the account', async () => {
    const at = new Date(begin * 1000).toISOString()
    const list = await get(owner, '/domains/old.example/reports?days=30')
    expect(list.body.data).toEqual([])
    expect(list.body.meta).toMatchObject({ total: 0, latest_report_at: at })

    const summary = await get(owner, '/dmarc-reports/domains/old.example/summary')
    expect(summary.body.data.totals.reports).toBe(0)
    expect(summary.body.meta).toEqual({ latest_report_at: at })

    const overview = await get(owner, '/dmarc-reports/overview?days=7')
    expect(overview.body.meta).toEqual({ latest_report_at: at })

    const sources = await get(owner, '/domains/old.example/sources?days=30')
    expect(sources.body.meta.latest_report_at).toBe(at)
    const intelligence = await get(owner, '/domains/old.example/sources/intelligence?days=30')
    expect(intelligence.body.meta.latest_report_at).toBe(at)

    // A domain that never had a report: null, not absent.
    const quiet = await get(owner, '/dmarc-reports/domains/quiet.example/summary')
    expect(quiet.body.meta).toEqual({ latest_report_at: null })
    expect((await get(owner, '/domains/quiet.example/reports')).body.meta.latest_report_at).toBeNull()
  })
})

describe('faults found on real reports', () => {
  test('a report that begins before a period and reaches into it belongs to it', async () => {
    const owner = await ownerWith('span.example')
    // Five days from 12 days ago: it overlaps the last 10 days, and its figures count on its first day.
    const id = await post(
      owner,
      email(report({ domain: 'span.example', id: 's-1', begin: daysAgo(12), days: 5 }), 's-1'),
    )
    expect((await settled(id)).status).toBe('processed')
    const list = await get(owner, '/domains/span.example/reports?days=10')
    expect(list.body.data.map((r: { report_id: string }) => r.report_id)).toEqual(['s-1'])
    const summary = await get(owner, '/dmarc-reports/domains/span.example/summary?days=10')
    expect(summary.body.data.totals).toMatchObject({ reports: 1, messages: 0 })
    expect(summary.body.meta).toBeUndefined()
    const before = await get(owner, '/dmarc-reports/domains/span.example/summary?days=7')
    expect(before.body.data.totals.reports).toBe(0)
    expect(before.body.meta).toEqual({ latest_report_at: new Date(daysAgo(12) * 1000).toISOString() })
  })

  test('a report of zero records counts in totals.reports, as in reporters and the list', async () => {
    const owner = await ownerWith('zero.example')
    const id = await post(
      owner,
      email(report({ domain: 'zero.example', id: 'z-1', begin: daysAgo(3), records: [] }), 'z-1'),
    )
    expect((await settled(id)).status).toBe('processed')
    const list = await get(owner, '/domains/zero.example/reports')
    expect(list.body.data).toHaveLength(1)
    expect(list.body.data[0]).toMatchObject({ record_count: 0, message_count: 0 })
    const summary = await get(owner, '/dmarc-reports/domains/zero.example/summary')
    expect(summary.body.data.totals).toMatchObject({ reports: 1, messages: 0 })
    expect(summary.body.data.reporters).toEqual([{ org_name: 'reporter.example', reports: 1, messages: 0 }])
    expect(summary.body.meta).toBeUndefined()
    const overview = await get(owner, '/dmarc-reports/overview')
    expect(overview.body.data.totals.reports).toBe(1)
  })

  test('received_at is when the message arrived, not when the job stored the report', async () => {
    const owner = await ownerWith('late.example')
    // The message arrives for a domain that is not verified yet: it waits in quarantine.
    await db().execute(
      sql`update domains set verified_at = null where account_id = ${owner.accountId} and name = 'late.example'`,
    )
    const arrived = new Date('2026-11-20T09:15:00Z')
    t.clock.now = arrived
    const id = await post(
      owner,
      email(report({ domain: 'late.example', id: 'late-1', begin: daysAgo(6) }), 'late-1'),
    )
    expect((await settled(id)).code).toBe('domain_not_verified')
    // Verified five days later, retried, stored now.
    t.clock.now = NOW
    await db().execute(
      sql`update domains set verified_at = now() where account_id = ${owner.accountId} and name = 'late.example'`,
    )
    await t.request('POST', `/api/v1/ingest/quarantine/${id}/retry`, { token: owner.token })
    expect((await settled(id)).status).toBe('processed')
    const [list] = (await get(owner, '/domains/late.example/reports')).body.data
    expect(list.received_at).toBe(arrived.toISOString())
    const detail = await get(owner, `/domains/late.example/reports/${list.id}`)
    expect(detail.body.data.received_at).toBe(arrived.toISOString())
    const [stored] = rowsOf<{ created_at: Date | string }>(
      await db().execute(sql`select created_at from aggregate_reports where id = ${list.id}`),
    )
    expect(new Date(stored!.created_at).getTime()).toBeGreaterThan(arrived.getTime())
  })

  test('records with <identities> are stored like <identifiers>', async () => {
    const owner = await ownerWith('ids.example')
    const xml = report({ domain: 'ids.example', id: 'ids-1', begin: daysAgo(2), identities: true })
    const id = await post(owner, email(xml, 'ids-1'))
    expect(await settled(id)).toMatchObject({ status: 'processed', code: null })
    const [stored] = (await get(owner, '/domains/ids.example/reports')).body.data
    const detail = await get(owner, `/domains/ids.example/reports/${stored.id}`)
    expect(detail.body.data.records).toHaveLength(1)
    expect(detail.body.data.records[0]).toMatchObject({ header_from: 'ids.example', count: 5 })
  })

  test('a report missing its metadata is quarantined for that, not for a record field', async () => {
    const owner = await ownerWith('broken.example')
    const xml = report({ domain: 'broken.example', id: 'b-1', begin: daysAgo(2) })
      .replace(/<report_metadata>[\s\S]*<\/report_metadata>/, '')
      .replace(/<header_from>[^<]*<\/header_from>/, '')
    const id = await post(owner, email(xml, 'b-1'))
    const message = await settled(id)
    expect(message).toMatchObject({ status: 'quarantined', code: 'missing_field' })
    expect(message.reason).toContain('report_metadata is missing')
    expect(message.reason).not.toContain('header_from')
  })
})
