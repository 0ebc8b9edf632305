import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AggregateMetadata, AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import type { AggregateWrite } from '../../../domain/reports/store-aggregate.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

let t: TestApp
let accountId: string
let domainId: number

beforeAll(async () => {
  t = await startTestApp()
  const owner = await t.account()
  accountId = owner.accountId
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'example.com' } })
  const rows = rowsOf<{ id: number }>(
    await t.db.database.db.execute(sql`select id from domains where name = 'example.com'`),
  )
  domainId = Number(rows[0]!.id)
}, 60_000)
afterAll(() => t.close())

const metadata = (reportId: string, begin = 1_700_000_000): AggregateMetadata =>
  reportMetadata(
    { reportId, begin, domain: 'example.com' },
    {
      orgName: 'Example Reporter',
      email: 'noreply@reporter.example',
      policy: { adkim: 'r', aspf: 'r', pct: 100 },
    },
  )

const record = (ip: string, count: number, pass: boolean): AggregateRecord => ({
  sourceIp: ip,
  count,
  disposition: 'none',
  dkimEvaluated: pass ? 'pass' : 'fail',
  spfEvaluated: 'fail',
  reasons: [],
  headerFrom: 'example.com',
  envelopeFrom: 'bounce.example.com',
  envelopeTo: null,
  dkim: [
    {
      domain: 'example.com',
      selector: 's1\tweird',
      result: pass ? 'pass' : 'fail',
      humanResult: 'line\nbreak \\ back',
    },
  ],
  spf: [{ domain: 'bounce.example.com', scope: 'mfrom', result: 'fail' }],
})

async function* stream(records: AggregateRecord[]) {
  for (const r of records) yield r
}

const write = (
  reportId: string,
  records: AggregateRecord[],
  hash: string,
  begin?: number,
): AggregateWrite => ({
  accountId,
  domainId,
  messageId: null,
  metadata: metadata(reportId, begin),
  records: stream(records),
  evaluate: (r) => ({
    dkimAligned: r.dkimEvaluated === 'pass',
    spfAligned: false,
    dmarcPass: r.dkimEvaluated === 'pass',
  }),
  contentHash: () => hash,
})

test('stores a report, its records (special characters intact) and rollups in one go', async () => {
  const writer = createAggregateWriter(t.db.database)
  const records = [
    record('192.0.2.1', 10, true),
    record('192.0.2.1', 5, true),
    record('2001:db8::1', 3, false),
  ]
  const result = await writer.write(write('r1', records, 'hash-1'))
  expect(result).toEqual({ status: 'stored', reportId: expect.any(Number), records: 3, messages: 18 })
  const db = t.db.database.db
  const stored = rowsOf<{ dkim: { selector: string; humanResult: string }[]; source_ip: string }>(
    await db.execute(sql`select dkim, host(source_ip) as source_ip from aggregate_records order by id`),
  )
  expect(stored[0]!.dkim[0]).toMatchObject({ selector: 's1\tweird', humanResult: 'line\nbreak \\ back' })
  expect(stored[2]!.source_ip).toBe('2001:db8::1')
  const rollups = rowsOf<{ source_ip: string; messages: number; dkim_aligned: boolean }>(
    await db.execute(
      sql`select host(source_ip) as source_ip, messages::int as messages, dkim_aligned from daily_rollups order by source_ip`,
    ),
  )
  expect(rollups).toEqual([
    { source_ip: '192.0.2.1', messages: 15, dkim_aligned: true },
    { source_ip: '2001:db8::1', messages: 3, dkim_aligned: false },
  ])
  const selectors = rowsOf<{ selector: string; messages: number }>(
    await db.execute(
      sql`select selector, messages::int as messages from dkim_selectors_seen order by selector`,
    ),
  )
  expect(selectors).toEqual([{ selector: 's1\tweird', messages: 18 }])
})

test('the same report again (by identity or by content) is counted, not stored', async () => {
  const writer = createAggregateWriter(t.db.database)
  const again = await writer.write(write('r1', [record('192.0.2.9', 1, true)], 'other-hash'))
  expect(again.status).toBe('duplicate')
  const sameContent = await writer.write(write('r1-renamed', [record('192.0.2.1', 10, true)], 'hash-1'))
  expect(sameContent.status).toBe('duplicate')
  // A same-id report over another range is another report.
  const otherRange = await writer.write(write('r1', [record('192.0.2.2', 7, true)], 'hash-2', 1_700_086_400))
  expect(otherRange.status).toBe('stored')
  const db = t.db.database.db
  const reports = rowsOf<{ report_id: string; duplicates_seen: number }>(
    await db.execute(sql`select report_id, duplicates_seen from aggregate_reports order by id`),
  )
  expect(reports).toEqual([
    { report_id: 'r1', duplicates_seen: 2 },
    { report_id: 'r1', duplicates_seen: 0 },
  ])
  const total = rowsOf<{ n: number }>(
    await db.execute(sql`select sum(messages)::int as n from daily_rollups`),
  )
  expect(total[0]!.n).toBe(25)
})

test('a failure in the middle of the stream rolls the whole report back', async () => {
  const writer = createAggregateWriter(t.db.database)
  async function* broken() {
    yield record('192.0.2.50', 1, true)
    throw new Error('parse failure at record 2')
  }
  await expect(writer.write({ ...write('r-broken', [], 'hash-3'), records: broken() })).rejects.toThrow(
    'parse failure',
  )
  const rows = rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from aggregate_reports where report_id = 'r-broken'`,
    ),
  )
  expect(rows[0]!.n).toBe(0)
})

test('a large report (past the one-statement size) goes in by COPY with the same figures and duplicate rules', async () => {
  const writer = createAggregateWriter(t.db.database)
  const begin = 1_700_500_000
  const records = Array.from({ length: 1200 }, (_, i) =>
    record(`198.51.${Math.floor(i / 200)}.${i % 200}`, 1 + (i % 3), i % 2 === 0),
  )
  const messages = records.reduce((sum, r) => sum + r.count, 0)
  const stored = await writer.write(write('large-1', records, 'hash-large', begin))
  expect(stored).toEqual({ status: 'stored', reportId: expect.any(Number), records: 1200, messages })
  const db = t.db.database.db
  const day = new Date(begin * 1000).toISOString().slice(0, 10)
  const figures = rowsOf<{ rows: number; messages: number; pass: number; total: number }>(
    await db.execute(sql`select (select count(*)::int from aggregate_records r join aggregate_reports a on a.id = r.report_id
        where a.report_id = 'large-1') as rows,
      (select sum(messages)::int from daily_rollups where day = ${day}) as messages,
      (select sum(messages)::int from daily_rollups where day = ${day} and dkim_aligned) as pass,
      (select messages::int from daily_domain_totals where day = ${day}) as total`),
  )[0]!
  const passing = records.filter((r) => r.dkimEvaluated === 'pass').reduce((sum, r) => sum + r.count, 0)
  expect(figures).toEqual({ rows: 1200, messages, pass: passing, total: messages })
  // Same content under another id, and the same id again: acknowledged, nothing added.
  expect((await writer.write(write('large-renamed', records, 'hash-large', begin))).status).toBe('duplicate')
  expect((await writer.write(write('large-1', records, 'hash-other', begin))).status).toBe('duplicate')
  const after = rowsOf<{ messages: number; seen: number }>(
    await db.execute(sql`select (select sum(messages)::int from daily_rollups where day = ${day}) as messages,
      (select duplicates_seen from aggregate_reports where report_id = 'large-1') as seen`),
  )[0]!
  expect(after).toEqual({ messages, seen: 2 })
})

test('a large report that breaks after the first records rolls back entirely', async () => {
  const writer = createAggregateWriter(t.db.database)
  async function* broken() {
    for (let i = 0; i < 900; i++) yield record(`203.0.113.${i % 250}`, 1, true)
    throw new Error('parse failure at record 901')
  }
  await expect(writer.write({ ...write('large-broken', [], 'hash-5'), records: broken() })).rejects.toThrow(
    'parse failure',
  )
  const rows = rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select (select count(*)::int from aggregate_reports where report_id = 'large-broken')
        + (select count(*)::int from daily_rollups where host(source_ip) like '203.0.113.%') as n`,
    ),
  )
  expect(rows[0]!.n).toBe(0)
})

test('rollups keep raw passes, forwarding and a few signing/SPF domains per source as evidence', async () => {
  const writer = createAggregateWriter(t.db.database)
  const begin = 1_701_000_000
  const signed = (domain: string, forwarded = false): AggregateRecord => ({
    ...record('192.0.2.77', 4, false),
    reasons: forwarded ? [{ type: 'forwarded', comment: null }] : [],
    dkim: [{ domain, selector: 'k1', result: 'pass', humanResult: null }],
    spf: [{ domain: 'Bounce.ESP.example.', scope: 'mfrom', result: 'pass' }],
  })
  await writer.write(write('evidence-1', [signed('mcsv.net'), signed('esp.example', true)], 'hash-e1', begin))
  await writer.write(
    write(
      'evidence-2',
      Array.from({ length: 10 }, (_, i) => signed(`d${i}.example`)),
      'hash-e2',
      begin,
    ),
  )
  const row = rowsOf<{
    messages: number
    spf_pass: number
    dkim_pass: number
    forwarded: number
    dkim_domains: string[]
    spf_domains: string[]
  }>(
    await t.db.database.db.execute(sql`select messages::int, spf_pass::int, dkim_pass::int, forwarded::int, dkim_domains, spf_domains
      from daily_rollups where host(source_ip) = '192.0.2.77'`),
  )
  expect(row).toHaveLength(1)
  expect(row[0]).toMatchObject({ messages: 48, spf_pass: 48, dkim_pass: 48, forwarded: 4 })
  // Merged across reports, sorted, at most 8; domains are normalised.
  expect(row[0]!.dkim_domains).toHaveLength(8)
  expect(row[0]!.dkim_domains.slice(0, 2)).toEqual(['d0.example', 'd1.example'])
  expect(row[0]!.spf_domains).toEqual(['bounce.esp.example'])
})

// A value PostgreSQL refuses (here a count past 2^31 - 1; the parser refuses those, this is the
// writer's own guard) in a report that takes the COPY path. A refusal after the last chunk (500
// records: under one 256 KB chunk) used to be dropped by postgres.js, and the write waited forever
// with its transaction open (infrastructure/repositories/sql-tx.ts, copyIn). Either way the write
// fails with PostgreSQL's own error and stores nothing.
async function attempt(reportId: string, records: AggregateRecord[]) {
  const writer = createAggregateWriter(t.db.database)
  return Promise.race([
    writer.write(write(reportId, records, `hash-${reportId}`)).then(
      () => 'stored',
      (error) => `failed: ${(error as Error).message}`,
    ),
    Bun.sleep(15_000).then(() => 'still waiting after 15 s'),
  ])
}

const stored = async (reportId: string) =>
  rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from aggregate_reports where report_id = ${reportId}`,
    ),
  )[0]!.n

test('a value refused after the last chunk fails the write instead of hanging', async () => {
  const records = Array.from({ length: 500 }, (_, i) =>
    record(`192.0.2.${i % 250}`, i === 499 ? 3_000_000_000 : 1, true),
  )
  expect(await attempt('late-refusal', records)).toMatch(/^failed: .*out of range/)
  expect(await stored('late-refusal')).toBe(0)
}, 30_000)

test('a value refused while rows still stream fails the write with the refusal', async () => {
  // 20,000 records: several 256 KB chunks after the refused one.
  const records = Array.from({ length: 20_000 }, (_, i) =>
    record(`198.51.${Math.floor(i / 250)}.${i % 250}`, i === 450 ? 3_000_000_000 : 1, true),
  )
  expect(await attempt('early-refusal', records)).toMatch(/^failed: .*out of range/)
  expect(await stored('early-refusal')).toBe(0)
}, 30_000)
