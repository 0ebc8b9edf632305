import { expect, test } from 'bun:test'
import type { PayloadOutcome } from '../../../domain/ingest/process-message.ts'
import { BATCHED_REPORT_RECORDS, holdSmallReports, settle } from '../../../domain/ingest/report-batch.ts'
import type { AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import type { AggregateReportWriter, AggregateWrite } from '../../../domain/reports/store-aggregate.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { aggregateRecord } from '../../support/aggregate-records.ts'

const evaluate = () => ({ dkimAligned: true, spfAligned: false, dmarcPass: true })

function write(records: AsyncIterable<AggregateRecord>): AggregateWrite {
  return {
    accountId: 'a',
    domainId: 1,
    messageId: 'm',
    metadata: reportMetadata({ reportId: 'r', begin: 1_700_000_000, domain: 'example.com' }),
    records,
    evaluate,
    contentHash: () => 'hash',
  }
}

async function* records(n: number, failAt = -1) {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error(`parse failure at record ${i + 1}`)
    yield aggregateRecord(`192.0.2.${i % 250}`, { count: 2 })
  }
}

/** A writer for large reports that counts what reaches it. */
function large() {
  const seen: number[] = []
  const writer: AggregateReportWriter = {
    async write(input) {
      let n = 0
      for await (const _ of input.records) n++
      seen.push(n)
      return { status: 'stored', reportId: 77, records: n, messages: 2 * n }
    },
  }
  return { writer, seen }
}

test('a small report is held whole with its outcomes, answered with a provisional result', async () => {
  const big = large()
  const { writer, held } = holdSmallReports(big.writer)
  const result = await writer.write(write(records(3)))
  expect(result).toEqual({ status: 'stored', reportId: -1, records: 3, messages: 6 })
  expect(held).toHaveLength(1)
  expect(held[0]!.records).toHaveLength(3)
  expect(held[0]!.records[0]![1]).toEqual(evaluate())
  expect(held[0]!.contentHash).toBe('hash')
  expect(big.seen).toEqual([])
})

test('a large report goes to the writer at once, every record included', async () => {
  const big = large()
  const { writer, held } = holdSmallReports(big.writer)
  const result = await writer.write(write(records(BATCHED_REPORT_RECORDS + 50)))
  expect(result).toEqual({ status: 'stored', reportId: 77, records: 450, messages: 900 })
  expect(big.seen).toEqual([BATCHED_REPORT_RECORDS + 50])
  expect(held).toEqual([])
})

test('a parse failure surfaces from the write and holds nothing', async () => {
  const { writer, held } = holdSmallReports(large().writer)
  await expect(writer.write(write(records(5, 2)))).rejects.toThrow('parse failure at record 3')
  expect(held).toEqual([])
})

test('settle makes provisional outcomes final: stored with its id, a duplicate without its figures', () => {
  const provisional = (id: number): PayloadOutcome => ({
    status: 'stored',
    kind: 'aggregate',
    id,
    detail: { report_id: `r${-id}`, records: 1, messages: 1 },
  })
  const tls: PayloadOutcome = { status: 'stored', kind: 'tls-rpt', id: 5 }
  const settled = settle(
    [provisional(-1), tls, provisional(-2)],
    [
      { status: 'stored', reportId: 10, records: 3, messages: 9 },
      { status: 'duplicate', reportId: 10 },
    ],
  )
  expect(settled).toEqual([
    { status: 'stored', kind: 'aggregate', id: 10, detail: { report_id: 'r1', records: 3, messages: 9 } },
    tls,
    { status: 'duplicate', kind: 'aggregate', id: 10, detail: { report_id: 'r2' } },
  ])
})
