import type { AggregateRecord } from '../reports/aggregate-types.ts'
import type {
  AggregateReportWriter,
  AggregateWrite,
  AggregateWriteResult,
  RecordOutcome,
} from '../reports/store-aggregate.ts'
import type { PayloadOutcome } from './process-message.ts'

// Small reports in batches (docs/ingestion.md, "The queue"): while a worker's batch of messages is
// parsed, each small aggregate report is parsed and evaluated in full and held back; the batch then
// stores every held report and marks its messages processed in one transaction
// (ReportBatchStore). A parse failure surfaces while the report is read, before anything is held,
// so a bad message is quarantined on its own and never fails its neighbours. Large reports stream
// to the ordinary writer at once (their own transaction), as before.

/** Up to this many records a report is held for its batch (the writer's one-statement limit). */
export const BATCHED_REPORT_RECORDS = 400

/** A small report read in full, waiting for its batch's transaction. */
export interface HeldReport {
  write: Omit<AggregateWrite, 'records' | 'evaluate' | 'contentHash'>
  records: [AggregateRecord, RecordOutcome][]
  contentHash: string
}

/**
 * A writer that holds small reports and passes large ones to `large`. A held report is answered at
 * once with a provisional result (a negative id naming its place in `held`); `settle` replaces it
 * with the stored or duplicate result once the batch is committed.
 */
export function holdSmallReports(large: AggregateReportWriter): {
  writer: AggregateReportWriter
  held: HeldReport[]
} {
  const held: HeldReport[] = []
  const writer: AggregateReportWriter = {
    async write(input) {
      const iterator = input.records[Symbol.asyncIterator]()
      const head: [AggregateRecord, RecordOutcome][] = []
      while (head.length <= BATCHED_REPORT_RECORDS) {
        const next = await iterator.next()
        if (next.done) {
          const { records: _r, evaluate: _e, contentHash, ...write } = input
          held.push({ write, records: head, contentHash: contentHash() })
          let messages = 0
          for (const [record] of head) messages += record.count
          return { status: 'stored', reportId: -held.length, records: head.length, messages }
        }
        head.push([next.value, input.evaluate(next.value)])
      }
      // Large: the writer evaluates again what was read (a few hundred records, once per report).
      async function* replay() {
        for (const [record] of head) yield record
        while (true) {
          const next = await iterator.next()
          if (next.done) return
          yield next.value
        }
      }
      return large.write({ ...input, records: replay() })
    },
  }
  return { writer, held }
}

/** The provisional outcomes of held reports, made final from the batch's results (in `held` order). */
export function settle(outcomes: PayloadOutcome[], results: AggregateWriteResult[]): PayloadOutcome[] {
  return outcomes.map((outcome) => {
    if (outcome.status === 'quarantine' || outcome.kind !== 'aggregate' || outcome.id >= 0) return outcome
    const result = results[-outcome.id - 1]
    if (result === undefined) throw new Error(`no batch result for held report ${-outcome.id}`)
    if (result.status === 'stored')
      return {
        ...outcome,
        id: result.reportId,
        detail: { ...outcome.detail, records: result.records, messages: result.messages },
      }
    const { records: _r, messages: _m, ...detail } = outcome.detail ?? {}
    return { status: 'duplicate', kind: outcome.kind, id: result.reportId, detail }
  })
}
