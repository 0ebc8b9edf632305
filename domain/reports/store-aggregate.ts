import type { AggregateMetadata, AggregateRecord } from './aggregate-types.ts'

// The port that stores one aggregate report: its row, its records and the daily rollups, in one
// transaction, streaming the records so memory stays bounded whatever the report size.

export interface RecordOutcome {
  dkimAligned: boolean
  spfAligned: boolean
  dmarcPass: boolean
}

export interface AggregateWrite {
  accountId: string
  domainId: number
  messageId: string | null
  metadata: AggregateMetadata
  /** Streamed from the parser; throwing from it (a parse failure mid-way) rolls everything back. */
  records: AsyncIterable<AggregateRecord>
  evaluate: (record: AggregateRecord) => RecordOutcome
  /** Available once `records` is exhausted: the hash of the decompressed report. */
  contentHash: () => string
}

export type AggregateWriteResult =
  | { status: 'stored'; reportId: number; records: number; messages: number }
  /** Seen before (same reporter, id, policy domain and range, or the same content): counted, not stored. */
  | { status: 'duplicate'; reportId: number }

export interface AggregateReportWriter {
  write(input: AggregateWrite): Promise<AggregateWriteResult>
}

/**
 * The UTC day a record is counted on: the day its report's range begins. The parser bounds
 * `begin` (aggregate/report-fields.ts, MAX_REPORT_TIME), so it always is a real date here.
 */
export function reportDay(begin: number): string {
  return new Date(begin * 1000).toISOString().slice(0, 10)
}
