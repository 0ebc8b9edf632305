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
