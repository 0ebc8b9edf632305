import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { HeldReport } from '../../../domain/ingest/report-batch.ts'
import type { AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { pgReportBatchStore } from '../../../infrastructure/repositories/aggregate-report-batch.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// A worker's batch of small reports in one transaction (docs/ingestion.md, "The queue"): the
// same rows and figures as storing the reports one by one, duplicates exact within the batch, and
// the batch's messages marked in the same transaction, so a batch that fails stores nothing.

let t: TestApp
let accountId: string
const domainIds: Record<string, number> = {}

beforeAll(async () => {
  t = await startTestApp()
  const owner = await t.account()
  accountId = owner.accountId
  for (const name of ['one-by-one.example', 'batched.example', 'marks.example', 'late.example']) {
    await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: name } })
    const rows = rowsOf<{ id: number }>(
      await t.db.database.db.execute(
        sql`select id from domains where name = ${name} and account_id = ${accountId}`,
      ),
    )
    domainIds[name] = Number(rows[0]!.id)
  }
}, 60_000)
afterAll(() => t.close())

const record = (ip: string, count: number, pass: boolean, selector = 's1'): AggregateRecord => ({
  sourceIp: ip,
  count,
  disposition: pass ? 'none' : 'reject',
  dkimEvaluated: pass ? 'pass' : 'fail',
  spfEvaluated: 'fail',
  reasons: pass ? [] : [{ type: 'forwarded', comment: 'a "quoted" \\ comment' }],
  headerFrom: 'example.com',
  envelopeFrom: 'bounce.example.com',
  envelopeTo: null,
  dkim: [
    {
      domain: pass ? 'esp.example' : 'other.example',
      selector,
      result: pass ? 'pass' : 'fail',
      humanResult: null,
    },
  ],
  spf: [{ domain: 'bounce.example.com', scope: 'mfrom', result: 'fail' }],
})
const evaluate = (r: AggregateRecord) => ({
  dkimAligned: r.dkimEvaluated === 'pass',
  spfAligned: false,
  dmarcPass: r.dkimEvaluated === 'pass',
})

/** The reports of the comparison: shared IPs and days, an in-batch duplicate by id and one by content. */
const reports = (
  domain: string,
): { id: string; begin: number; hash: string; records: AggregateRecord[] }[] => [
  {
    id: 'a',
    begin: 1_700_000_000,
    hash: `${domain}-h1`,
    records: [record('192.0.2.1', 10, true), record('192.0.2.2', 3, false)],
  },
  {
    id: 'b',
    begin: 1_700_000_000,
    hash: `${domain}-h2`,
    records: [record('192.0.2.1', 5, true, 's2'), record('2001:db8::1', 2, false)],
  },
  { id: 'c', begin: 1_700_100_000, hash: `${domain}-h3`, records: [record('192.0.2.2', 7, false)] },
  // The same identity as `a` with other content, then `b`'s content under another id.
  { id: 'a', begin: 1_700_000_000, hash: `${domain}-h4`, records: [record('192.0.2.9', 99, true)] },
  {
    id: 'b-again',
    begin: 1_700_000_000,
    hash: `${domain}-h2`,
    records: [record('192.0.2.1', 5, true, 's2'), record('2001:db8::1', 2, false)],
  },
  {
    id: 'd',
    begin: 1_700_000_000,
    hash: `${domain}-h5`,
    records: Array.from({ length: 30 }, (_, i) => record(`198.51.100.${i}`, 1 + i, i % 3 === 0)),
  },
]

const held = (domain: string, messageId: string | null = null): HeldReport[] =>
  reports(domain).map((r) => ({
    write: {
      accountId,
      domainId: domainIds[domain]!,
      messageId,
      metadata: reportMetadata({ reportId: r.id, begin: r.begin, domain }, { orgName: 'Reporter' }),
    },
    records: r.records.map((x) => [x, evaluate(x)]),
    contentHash: r.hash,
  }))

/** Everything a domain's reports added, without ids, for comparing two domains. */
async function figures(domain: string) {
  const id = domainIds[domain]!
  const db = t.db.database.db
  const read = async (query: ReturnType<typeof sql>) => rowsOf(await db.execute(query))
  return {
    reports:
      await read(sql`select report_id, content_hash like '%-h%' as hashed, substring(content_hash from '-h.*') as hash,
      record_count, message_count::int, duplicates_seen from aggregate_reports where domain_id = ${id} order by report_id, begin_at`),
    records:
      await read(sql`select a.report_id, host(r.source_ip) as ip, r.count, r.disposition, r.reasons::text, r.dkim::text,
      r.dkim_aligned, r.dmarc_pass, r.day::text from aggregate_records r join aggregate_reports a on a.id = r.report_id
      where r.domain_id = ${id} order by a.report_id, r.source_ip, r.count`),
    rollups:
      await read(sql`select day::text, host(source_ip) as ip, disposition, dkim_aligned, spf_aligned, messages::int,
      spf_pass::int, dkim_pass::int, forwarded::int, dkim_domains, spf_domains, reports from daily_rollups
      where domain_id = ${id} order by day, source_ip, disposition, dkim_aligned`),
    totals:
      await read(sql`select day::text, messages::int, dmarc_pass::int, dkim_aligned::int, disposition_none::int,
      disposition_reject::int, reports from daily_domain_totals where domain_id = ${id} order by day`),
    weekly: await read(sql`select week::text, host(source_ip) as ip, failing::int from weekly_failing_sources
      where domain_id = ${id} order by week, source_ip`),
    selectors:
      await read(sql`select selector, signing_domain, last_seen::text, messages::int from dkim_selectors_seen
      where domain_id = ${id} order by selector, signing_domain`),
  }
}

test('a batch stores the same rows and figures as one by one, duplicates within it counted once each', async () => {
  const writer = createAggregateWriter(t.db.database)
  const single = []
  for (const report of held('one-by-one.example')) {
    single.push(
      await writer.write({
        ...report.write,
        records: (async function* () {
          for (const [r] of report.records) yield r
        })(),
        evaluate,
        contentHash: () => report.contentHash,
      }),
    )
  }
  const batched = await pgReportBatchStore(t.db.database).commit(
    held('batched.example'),
    () => [],
    new Date(),
  )
  expect(batched.map((r) => r.status)).toEqual([
    'stored',
    'stored',
    'stored',
    'duplicate',
    'duplicate',
    'stored',
  ])
  expect(batched.map((r) => r.status)).toEqual(single.map((r) => r.status))
  // Each duplicate names the report stored first: `a` and `b` of the same batch.
  expect(batched[3]!.reportId).toBe(batched[0]!.reportId)
  expect(batched[4]!.reportId).toBe(batched[1]!.reportId)
  expect(batched[0]).toEqual({ status: 'stored', reportId: expect.any(Number), records: 2, messages: 13 })
  const one = await figures('one-by-one.example')
  const many = await figures('batched.example')
  expect(many.records).toHaveLength(35)
  expect(many.reports.map((r) => (r as { duplicates_seen: number }).duplicates_seen)).toEqual([1, 1, 0, 0])
  expect(many).toEqual(one)
})

test('the messages are marked in the batch transaction: a batch that fails half-way stores nothing, a re-run stores once', async () => {
  const db = t.db.database.db
  const ids = rowsOf<{ id: string }>(
    await db.execute(sql`insert into ingest_messages (account_id, source, size, sha256, received_at)
      select ${accountId}, 'http', 1, 'x' || g, now() from generate_series(1, 2) g returning id`),
  ).map((row) => row.id)
  const store = pgReportBatchStore(t.db.database)
  const batch = held('marks.example', ids[0]!)
  // A crash between storing the reports and marking the messages (here: the marks fail).
  await expect(store.commit(batch, () => [{ id: 'not-a-uuid', outcome: [] }], new Date())).rejects.toThrow()
  const nothing = await figures('marks.example')
  expect([nothing.reports, nothing.records, nothing.rollups, nothing.totals]).toEqual([[], [], [], []])
  const pending = rowsOf<{ n: number }>(
    await db.execute(
      sql`select count(*)::int as n from ingest_messages where account_id = ${accountId} and status = 'pending'`,
    ),
  )[0]!.n
  expect(pending).toBe(2)
  // The re-run: everything once, the messages processed with the final outcomes.
  const results = await store.commit(
    batch,
    (r) => ids.map((id) => ({ id, outcome: r.map((x) => x.status) })),
    new Date(),
  )
  expect(results.map((r) => r.status)).toEqual([
    'stored',
    'stored',
    'stored',
    'duplicate',
    'duplicate',
    'stored',
  ])
  const marked = rowsOf<{ status: string; outcome: string[] }>(
    await db.execute(sql`select status, outcome from ingest_messages where id in (${ids[0]}, ${ids[1]})`),
  )
  expect(marked.map((m) => m.status)).toEqual(['processed', 'processed'])
  expect(marked[0]!.outcome).toEqual(['stored', 'stored', 'stored', 'duplicate', 'duplicate', 'stored'])
  expect(await figures('marks.example')).toEqual({
    ...(await figures('batched.example')),
  })
})

test('reports of a month that has ended mark it stale, as one report does (the monthly rollups are redone)', async () => {
  const db = t.db.database.db
  // November 2023 has been built (not stale); the batch holds two reports of it.
  await db.execute(sql`insert into monthly_rollup_builds (account_id, month, built_at, stale)
    values (${accountId}, '2023-11-01', now(), false)
    on conflict (account_id, month) do update set stale = false`)
  const results = await pgReportBatchStore(t.db.database).commit(
    held('late.example').slice(0, 3),
    () => [],
    new Date(),
  )
  expect(results.map((r) => r.status)).toEqual(['stored', 'stored', 'stored'])
  const months = rowsOf<{ month: string; stale: boolean }>(
    await db.execute(sql`select month::text, stale from monthly_rollup_builds
      where account_id = ${accountId} and month = '2023-11-01'`),
  )
  expect(months).toEqual([{ month: '2023-11-01', stale: true }])
})
