import type { AggregateWriteResult } from '../reports/store-aggregate.ts'
import type { DomainMatch, QuarantineReason } from './process-message.ts'
import type { HeldReport } from './report-batch.ts'

// What the report job needs besides the message store and the aggregate writer
// (domain/reports/store-aggregate.ts): adapters are built in src/compose/ingest.ts.

/** An accepted message as the report job reads it (its bytes in one value, or in pieces). */
export interface StoredMessage {
  id: string
  accountId: string
  source: string
  recipient: string | null
  /** The message when stored in one value; null when in pieces (or gone by retention). */
  raw: Uint8Array | null
  /** How many pieces hold the message (0 when it is in raw). */
  pieces: number
  size: number
  sha256: string
  receivedAt: Date
  status: 'pending' | 'processed' | 'quarantined'
}

/** The accepted messages, as the report job reads and settles them. */
export interface JobMessageStore {
  load(id: string): Promise<StoredMessage | null>
  /**
   * A batch's messages in one read, in no particular order; the bytes only of those up to
   * `inlineBytes` (`withheld: true` for a larger one in one value, to be loaded on its own).
   */
  loadMany(ids: string[], inlineBytes: number): Promise<(StoredMessage & { withheld: boolean })[]>
  /** The message's bytes in order, a piece at a time. */
  body(message: StoredMessage): AsyncIterable<Uint8Array>
  markProcessed(id: string, outcome: unknown, now: Date): Promise<void>
  quarantine(id: string, reason: QuarantineReason, now: Date): Promise<void>
}

/**
 * The account's verified domain a report's policy domain belongs to: the policy domain itself,
 * else its organizational domain (docs/ingestion.md); a reason to quarantine otherwise.
 */
export type ReportDomainLookup = ((accountId: string, policyDomain: string) => Promise<DomainMatch>) & {
  /** Forgets remembered matches (a store was refused: a domain may be gone since it was matched). */
  forget?: () => void
}

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
