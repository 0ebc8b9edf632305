import type { AggregateWriteResult } from '../reports/store-aggregate.ts'
import type { DomainMatch } from './process-message.ts'
import type { HeldReport } from './report-batch.ts'

// What the report job needs besides the message store and the aggregate writer
// (domain/reports/store-aggregate.ts): adapters are built in src/compose/ingest.ts.

/**
 * The account's verified domain a report's policy domain belongs to: the policy domain itself,
 * else its organizational domain (docs/ingestion.md); a reason to quarantine otherwise.
 */
export type ReportDomainLookup = (accountId: string, policyDomain: string) => Promise<DomainMatch>

/** Looks up reverse DNS for up to `limit` new source IPs; answers how many it looked up. */
export type SourceEnricher = (input: { limit: number }) => Promise<number>

/** A processed message's mark: what it held (the outcomes, as stored in ingest_messages.outcome). */
export interface MessageMark {
  id: string
  outcome: unknown
}

/**
 * Stores a batch's held small reports (domain/ingest/report-batch.ts) and marks its processed
 * messages, in one transaction: either all of it is committed or none (a retried batch finds its
 * messages pending and stores everything once). `marks` is given the reports' results in order,
 * so the marks carry the final outcomes. Duplicates (of stored reports or within the batch) are
 * counted on the report stored first, as one by one.
 */
export interface ReportBatchStore {
  commit(
    reports: HeldReport[],
    marks: (results: AggregateWriteResult[]) => MessageMark[],
    now: Date,
  ): Promise<AggregateWriteResult[]>
}
