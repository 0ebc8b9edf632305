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

// Pre-existing (same on 20d093a): a value PostgreSQL refuses (a count past 2^31 - 1, which the parser
// accepts up to 15 digits, or a raw NUL in a text field) in a report that takes the COPY path. When
// the refusal comes after the last chunk (here: 500 records, under one 256 KB chunk), postgres.js has
// already dropped its stream reference in final() and never calls the final callback, so
// streamCopy's `await done` never settles: the ingest hangs with its transaction open.
test('a refused value in a large report fails the write instead of hanging', async () => {
  const writer = createAggregateWriter(t.db.database)
  const records = Array.from({ length: 500 }, (_, i) =>
    record(`192.0.2.${i % 250}`, i === 0 ? 3_000_000_000 : 1, true),
  )
  const outcome = await Promise.race([
    writer.write(write('big-count', records, 'hash-big-count')).then(
      () => 'stored',
      (error) => `failed: ${error}`,
    ),
    Bun.sleep(15_000).then(() => 'still waiting after 15 s'),
  ])
  expect(outcome).toStartWith('failed')
}, 30_000)
