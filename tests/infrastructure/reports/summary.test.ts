import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { pgReportReader } from '../../../infrastructure/repositories/pg-report-reader.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { aggregateRecord, streamOf } from '../../support/aggregate-records.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// The summary's figures, read from rollups, daily totals and weekly failing sources, must equal
// what the raw records say, for periods that cut weeks at both ends.

let t: TestApp
let accountId: string
let domainId: number

beforeAll(async () => {
  t = await startTestApp()
  const owner = await t.account()
  accountId = owner.accountId
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'sum.example' } })
  domainId = Number(
    rowsOf<{ id: string }>(
      await t.db.database.db.execute(sql`select id from domains where name = 'sum.example'`),
    )[0]!.id,
  )
  const writer = createAggregateWriter(t.db.database)
  const day = 86_400
  const start = Date.parse('2026-10-01T00:00:00Z') / 1000
  for (let d = 0; d < 40; d++) {
    const records = Array.from({ length: 6 }, (_, i) =>
      aggregateRecord(`192.0.2.${(d * 7 + i) % 13}`, {
        count: 1 + ((d * 3 + i * 5) % 17),
        disposition: i % 3 === 0 ? 'none' : 'reject',
        headerFrom: 'sum.example',
      }),
    )
    await writer.write({
      accountId,
      domainId,
      messageId: null,
      metadata: reportMetadata(
        { reportId: `d${d}`, begin: start + d * day, domain: 'sum.example' },
        { policy: { p: 'reject' } },
      ),
      records: streamOf(records),
      // Records whose address ends in an even number are aligned; the rest fail.
      evaluate: (r) => {
        const aligned = Number(r.sourceIp.split('.')[3]) % 2 === 0
        return { dkimAligned: aligned, spfAligned: false, dmarcPass: aligned }
      },
      contentHash: () => `h${d}`,
    })
  }
}, 60_000)
afterAll(() => t.close())

test.each([
  ['2026-10-01', '2026-10-31'],
  ['2026-10-06', '2026-10-20'],
  ['2026-10-05', '2026-10-18'],
  ['2026-10-08', '2026-10-10'],
])('summary %s .. %s equals the raw records', async (from, to) => {
  const summary = await pgReportReader(t.db.database.db).summary(accountId, null, { from, to })
  const raw = rowsOf<{ messages: number; pass: number }>(
    await t.db.database.db.execute(sql`select sum(count)::int as messages, coalesce(sum(count) filter (where dmarc_pass), 0)::int as pass
      from aggregate_records where day between ${from}::date and ${to}::date`),
  )[0]!
  expect(summary.totals.messages).toBe(raw.messages)
  expect(summary.totals.dmarc_pass).toBe(raw.pass)
  const failing = rowsOf<{ source_ip: string; failing: number }>(
    await t.db.database.db.execute(sql`select host(source_ip) as source_ip, sum(count)::int as failing from aggregate_records
      where day between ${from}::date and ${to}::date and not dkim_aligned and not spf_aligned
      group by source_ip order by failing desc, source_ip limit 10`),
  )
  const top = summary.top_failing_sources.map((f) => ({ source_ip: f.source_ip, failing: f.failing }))
  expect(top.sort((a, b) => b.failing - a.failing || a.source_ip.localeCompare(b.source_ip))).toEqual(failing)
})
