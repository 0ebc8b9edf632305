import type {
  JobMessageStore,
  ReportBatchStore,
  ReportDomainLookup,
  SourceEnricher,
  StoredMessage,
} from '../../domain/ingest/ports.ts'
import {
  type Payload,
  type PayloadContext,
  PayloadFailure,
  type PayloadOutcome,
  type ProcessDeps,
  processPayloads,
  type QuarantineReason,
} from '../../domain/ingest/process-message.ts'
import { parseAggregateReport } from '../../domain/reports/aggregate-parser.ts'
import { alignRecord, publicSuffixOrganizationalDomain } from '../../domain/reports/alignment.ts'
import type { AggregateReportWriter } from '../../domain/reports/store-aggregate.ts'
import {
  type FailureTlsStore,
  type ReportStorageDeps,
  storeFailureReport,
  storeTlsReport,
} from '../../domain/reports/store-failure-tls.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { readAll, streamReports } from '../../infrastructure/mail/extract-reports.ts'
import { ExtractionError, type ExtractLimits } from '../../infrastructure/mail/extraction-failure.ts'
import type { ReportPayload } from '../../infrastructure/mail/report-payloads.ts'
import { ingestMessages, ingestRecords, ingestReports } from '../../infrastructure/metrics/instruments.ts'
import {
  ENRICH_SOURCES,
  MERGE_ROLLUPS,
  type MergeJob,
  PROCESS_MESSAGE,
} from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'
import { gcPacer, held, markGarbage, paced, processPacer } from '../../infrastructure/runtime/gc-pacer.ts'
import type { ChildRun } from '../../infrastructure/runtime/report-process.ts'
import { parseAggregateInThread } from '../../infrastructure/runtime/threaded-aggregate-parse.ts'
import { ByteBudget } from './byte-budget.ts'
import { processBatch } from './ingest-batch.ts'
import { digestInOwnProcess, ownProcessFor } from './own-process.ts'

// The background half of report intake: one job per accepted message, and a cron that looks up
// reverse DNS for new source IPs (never inside the parser).

export interface IngestJobDeps {
  /** Stores aggregate reports; stored ones enqueue their alert evaluation (src/compose/ingest.ts). */
  aggregates: AggregateReportWriter
  /** The account's verified domain a report is about (cached briefly by the composition root). */
  reportDomains: ReportDomainLookup
  /** Reverse DNS of new source IPs (the ENRICH_SOURCES cron, never inside the parser). */
  enrichSources: SourceEnricher
  /**
   * A large report's per-source rollup left pending (the writer merges it right after the commit;
   * this is the MERGE_ROLLUPS safety net): the rows merged, 0 when none were left; a merge that
   * moved rows enqueues its domain's report rules (src/compose/ingest.ts).
   */
  mergeRollups: (job: MergeJob) => Promise<number>
  /** A worker batch's small reports and marks, in one transaction (src/jobs/ingest-batch.ts). */
  batches: ReportBatchStore
  messages: JobMessageStore
  forensicTls: FailureTlsStore
  logger: Logger
  now: () => Date
  limits: ExtractLimits
  /** Message bytes processed at once in this process (INGEST_WORKER_MAX_BYTES; docs/ingestion.md). */
  budget?: ByteBudget
  /** Reverse-DNS lookups per run and at once (ENRICH_PTR_PER_RUN, ENRICH_PTR_CONCURRENCY). */
  enrichPtr?: { perRun: number; concurrency: number }
  /**
   * Messages of at least this many bytes have their aggregate reports parsed on a thread of their
   * own (INGEST_PARSE_THREAD_BYTES; 0: never; docs/ingestion.md, "Sharing the thread with the API").
   */
  parseThreadBytes?: number
  /**
   * Messages of at least `minBytes` are digested by `run` in a process of their own, which answers
   * with its MessageResult (INGEST_PROCESS_BYTES; ROLE=all on PostgreSQL: src/compose/ingest.ts).
   */
  ownProcess?: { minBytes: number; run: (messageId: string) => Promise<ChildRun> }
}

/** What reading and storing one message needs (all a report process builds: src/report-process.ts). */
export type MessageJobDeps = Omit<IngestJobDeps, 'enrichSources' | 'mergeRollups' | 'batches' | 'enrichPtr'>

const sha256 = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex')

/** Decompression trouble inside a stream is a property of the message: quarantine, do not retry. */
async function* permanent(stream: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* stream
  } catch (error) {
    if (error instanceof ExtractionError) throw new PayloadFailure(error.reason)
    throw error
  }
}

// A report parsed on its own thread leaves this thread only the decompressed pieces and the events
// that come back: a collection every 16 MB of XML instead of 8 (2-3 for a 100,000-record report
// instead of 5) kept the peak where the thread's own heap allows (docs/ingestion.md, issue #20).
const threadedPacer = gcPacer(16 * 1024 * 1024)

function toPayload(deps: MessageJobDeps, payload: ReportPayload, threaded = false): Payload {
  const name = payload.entryName ?? payload.filename ?? payload.kind
  if (payload.kind === 'aggregate-xml')
    return {
      kind: 'aggregate',
      name,
      // The record stream's collections mark without sweeping (markGarbage): its garbage is the
      // parse's small cells, which the stream's next allocations sweep; the reads' p99 while a
      // 100,000-record report digests fell from 72-91 ms to 66-75 ms at the same peak RSS
      // (docs/ingestion.md, "The record stream's collections"). On the thread's path this thread
      // holds the pieces and events only: full collections, as before.
      open: () =>
        permanent(
          threaded ? paced(payload.open(), threadedPacer) : paced(payload.open(), processPacer, markGarbage),
        ),
    }
  if (payload.kind === 'tls-rpt-json') {
    return {
      kind: 'tls-rpt',
      name,
      async store(ctx: PayloadContext) {
        const bytes = await readAll(payload.open(), deps.limits.maxDecompressedBytes)
        if (!bytes.ok) return { status: 'quarantine', reason: bytes.reason }
        const stored = await storeTlsReport(storageDeps(deps, ctx), {
          accountId: ctx.accountId,
          messageId: ctx.messageId,
          json: new TextDecoder().decode(bytes.value),
          name,
        })
        if (!stored.ok) return { status: 'quarantine', reason: stored.reason }
        // The part for a domain still unverified makes the message wait; the rest is stored.
        if (stored.waiting !== null) return { status: 'quarantine', reason: stored.waiting }
        return {
          status: stored.status,
          id: stored.id,
          kind: 'tls-rpt',
          detail: { report_id: stored.reportId, domain: stored.domain, reporter: stored.reporter },
        }
      },
    }
  }
  const parts = payload.kind === 'feedback-report' ? payload.parts : null
  if (parts === null) throw new Error(`unknown payload kind ${payload.kind}`)
  return {
    kind: 'forensic',
    name,
    async store(ctx: PayloadContext) {
      const stored = await storeFailureReport(
        { ...storageDeps(deps, ctx), sha256 },
        { accountId: ctx.accountId, messageId: ctx.messageId, parts },
      )
      if (!stored.ok) return { status: 'quarantine', reason: stored.reason }
      return { status: stored.status, id: stored.id, kind: 'forensic', detail: { domain: stored.domain } }
    },
  }
}

/** The TLS-RPT and failure reports of a message go where HTTPS submissions go (store-failure-tls.ts). */
function storageDeps(deps: MessageJobDeps, ctx: PayloadContext): ReportStorageDeps {
  return { reports: deps.forensicTls, resolveDomain: (_, policyDomain) => ctx.resolveDomain(policyDomain) }
}

// One memoised organizational-domain lookup per process: records repeat the same few domains.
const alignment = { organizationalDomain: publicSuffixOrganizationalDomain() }

export function processDeps(deps: MessageJobDeps, messageBytes = 0): ProcessDeps {
  // A thread costs a few ms to start: only large messages (a large report) are worth one.
  const threaded =
    deps.parseThreadBytes !== undefined && deps.parseThreadBytes > 0 && messageBytes >= deps.parseThreadBytes
  return {
    async extract(message, each) {
      const extracted = await streamReports(message, deps.limits, (payload) =>
        each(toPayload(deps, payload, threaded)),
      )
      return extracted.ok ? { ok: true } : { ok: false, reason: extracted.reason }
    },
    parseAggregate: (chunks) => (threaded ? parseAggregateInThread(chunks) : parseAggregateReport(chunks)),
    hasher() {
      const hash = new Bun.CryptoHasher('sha256')
      return { update: (bytes) => void hash.update(bytes), digest: () => hash.digest('hex') }
    },
    evaluate: (record, metadata) => {
      const aligned = alignRecord(alignment, { record, policy: metadata.policy })
      return {
        dkimAligned: aligned.dkimAligned,
        spfAligned: aligned.spfAligned,
        dmarcPass: aligned.dmarc === 'pass',
      }
    },
    aggregates: deps.aggregates,
  }
}

/** What became of a message: `skipped` when it was not pending (processed already, or gone). */
export type MessageResult =
  | { status: 'processed'; outcomes: PayloadOutcome[] }
  | { status: 'quarantined'; reason: QuarantineReason; outcomes: PayloadOutcome[] }
  | { status: 'skipped' }

/** A pending message read through: its reports stored (or held for its batch), not yet marked. */
export type ReadMessage =
  | { ok: true; outcomes: PayloadOutcome[] }
  | { ok: false; reason: QuarantineReason; outcomes: PayloadOutcome[] }

/** Already handled (a retry after a crash past the commit) or gone: nothing to do. */
export const isPending = (message: StoredMessage | null): message is StoredMessage =>
  message !== null && message.status === 'pending' && (message.raw !== null || message.pieces > 0)

/** Extracts, parses and stores (or holds, with a batch's writer) the reports of a pending message. */
export async function readMessage(deps: MessageJobDeps, message: StoredMessage): Promise<ReadMessage> {
  const ctx: PayloadContext = {
    accountId: message.accountId,
    messageId: message.id,
    resolveDomain: (policyDomain) => deps.reportDomains(message.accountId, policyDomain),
  }
  // Admitted by size: large messages wait while others hold the budget (docs/ingestion.md, "Memory").
  const release = await (deps.budget ?? unlimited).acquire(message.size)
  try {
    // The message is read from the database a piece at a time, as the parser asks for it.
    return await processPayloads(processDeps(deps, message.size), deps.messages.body(message), ctx)
  } finally {
    release()
  }
}

/** What a message held, as ingest_messages.outcome keeps it. */
export const outcomeOf = (outcomes: PayloadOutcome[]): unknown =>
  outcomes.map((o) => (o.status === 'quarantine' ? { status: o.status, ...o.reason } : o))

export async function quarantineMessage(deps: MessageJobDeps, messageId: string, reason: QuarantineReason) {
  await deps.messages.quarantine(messageId, reason, deps.now())
  ingestMessages.inc({ outcome: 'quarantined' })
  deps.logger.warn('report message quarantined', {
    message_id: messageId,
    code: reason.code,
    reason: reason.message,
  })
}

/** Processes one message on its own (inline intake: src/wiring/ingest-now.ts). */
export async function processMessage(deps: MessageJobDeps, messageId: string): Promise<MessageResult> {
  // No pause collection while the message is read and stored (a large report's last stage counts
  // no bytes for a second or more): infrastructure/runtime/gc-pacer.ts. A batch holds it likewise.
  return held(processPacer, () => processOne(deps, messageId))
}

async function processOne(deps: MessageJobDeps, messageId: string): Promise<MessageResult> {
  const message = await deps.messages.load(messageId)
  if (!isPending(message)) return { status: 'skipped' }
  const own = ownProcessFor(deps, message.size)
  if (own !== undefined) return digestInOwnProcess(deps, own, messageId)
  const result = await readMessage(deps, message)
  if (!result.ok) {
    await quarantineMessage(deps, messageId, result.reason)
    return { status: 'quarantined', reason: result.reason, outcomes: result.outcomes }
  }
  await deps.messages.markProcessed(messageId, outcomeOf(result.outcomes), deps.now())
  countStored(result.outcomes)
  return { status: 'processed', outcomes: result.outcomes }
}

const unlimited = new ByteBudget(Number.POSITIVE_INFINITY)

/** Metrics, counted after the commit so a retried job does not count twice what it stored once. */
export function countStored(outcomes: PayloadOutcome[]): void {
  let fresh = false
  for (const o of outcomes) {
    if (o.status !== 'stored') continue
    fresh = true
    ingestReports.inc({ kind: o.kind })
    const records = o.detail?.records
    if (typeof records === 'number') ingestRecords.inc(undefined, records)
  }
  // A message is a duplicate when every report in it was already stored (sent twice, or re-fed).
  ingestMessages.inc({ outcome: fresh || outcomes.length === 0 ? 'processed' : 'duplicate' })
}

export function ingestJobs(deps: IngestJobDeps): JobHandler[] {
  // Reports should show up within a second of arriving: poll often, and take jobs in batches.
  const processMessages = handle(
    PROCESS_MESSAGE,
    // Measured with bench:ingest (docs/ingestion.md): two fetch loops, fetching on without pause
    // while batches come back full. Batches of 32: a batch's fixed statements (fetch, load, its
    // transaction, completion) and its alert triggers (one per domain) spread over twice the
    // messages; the workers took ~20% less CPU per report than with 16 (BENCH_ONLY=small).
    { batchSize: 32, localConcurrency: 2, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
    // A batch's small reports are stored and its messages marked in one transaction (ingest-batch.ts).
    (jobs) =>
      processBatch(
        deps,
        jobs.map((job) => job.data.messageId),
        new Set(
          jobs
            .filter((job) => job.retryCount >= (PROCESS_MESSAGE.options.retryLimit ?? 0))
            .map((job) => job.data.messageId),
        ),
      ),
  )
  const enrich = handle(ENRICH_SOURCES, async () => {
    const looked = await deps.enrichSources({ limit: deps.enrichPtr?.perRun ?? 1000 })
    if (looked > 0) deps.logger.info('source IPs enriched', { count: looked })
  })
  // One job at a time: each is one statement, and nearly always finds its rows merged already.
  const merge = handle(MERGE_ROLLUPS, async (jobs) => {
    for (const job of jobs) {
      const merged = await deps.mergeRollups(job.data)
      if (merged > 0) deps.logger.info('pending rollup merged by its job', { ...job.data, rows: merged })
    }
  })
  return [processMessages, merge, enrich]
}
