import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import {
  type DomainMatch,
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
import {
  type FailureTlsStore,
  type ReportStorageDeps,
  storeFailureReport,
  storeTlsReport,
} from '../../domain/reports/store-failure-tls.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { cacheFound } from '../../infrastructure/cache/found-cache.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { readAll, streamReports } from '../../infrastructure/mail/extract-reports.ts'
import { ExtractionError, type ExtractLimits } from '../../infrastructure/mail/extraction-failure.ts'
import type { ReportPayload } from '../../infrastructure/mail/report-payloads.ts'
import { ingestMessages, ingestRecords, ingestReports } from '../../infrastructure/metrics/instruments.ts'
import { ENRICH_SOURCES, PROCESS_MESSAGE } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'
import { createAggregateWriter } from '../../infrastructure/repositories/aggregate-report-writer.ts'
import type { PgIngestMessageStore } from '../../infrastructure/repositories/pg-ingest-message-store.ts'
import { resolveReportDomain } from '../../infrastructure/repositories/pg-report-domains.ts'
import { enrichSources } from '../../infrastructure/repositories/pg-source-enrichment.ts'
import { paced, processPacer } from '../../infrastructure/runtime/gc-pacer.ts'
import { ByteBudget } from './byte-budget.ts'

// The background half of report intake: one job per accepted message, and a cron that looks up
// reverse DNS for new source IPs (never inside the parser).

export interface IngestJobDeps {
  database: Database
  /** Stored reports enqueue their alert evaluation (infrastructure/queue/alert-triggers.ts). */
  boss: PgBoss | null
  messages: PgIngestMessageStore
  forensicTls: FailureTlsStore
  dns: DnsResolver
  logger: Logger
  now: () => Date
  limits: ExtractLimits
  /** Message bytes processed at once in this process (INGEST_WORKER_MAX_BYTES; docs/ingestion.md). */
  budget?: ByteBudget
  /** CPU slice of a report's stream (WORKER_SLICE_MS; infrastructure/runtime/cpu-slices.ts). */
  sliceMs?: number
  /** Reverse-DNS lookups per run and at once (ENRICH_PTR_PER_RUN, ENRICH_PTR_CONCURRENCY). */
  enrichPtr?: { perRun: number; concurrency: number }
}

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

function toPayload(deps: IngestJobDeps, payload: ReportPayload): Payload {
  const name = payload.entryName ?? payload.filename ?? payload.kind
  if (payload.kind === 'aggregate-xml')
    return { kind: 'aggregate', name, open: () => permanent(paced(payload.open(), processPacer)) }
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
        return {
          status: stored.status,
          id: stored.id,
          kind: 'tls-rpt',
          detail: { report_id: stored.reportId, domain: stored.domain },
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
function storageDeps(deps: IngestJobDeps, ctx: PayloadContext): ReportStorageDeps {
  return { reports: deps.forensicTls, resolveDomain: (_, policyDomain) => ctx.resolveDomain(policyDomain) }
}

// One memoised organizational-domain lookup per process: records repeat the same few domains.
const alignment = { organizationalDomain: publicSuffixOrganizationalDomain() }

export function processDeps(deps: IngestJobDeps): ProcessDeps {
  return {
    async extract(message, each) {
      const extracted = await streamReports(message, deps.limits, (payload) => each(toPayload(deps, payload)))
      return extracted.ok ? { ok: true } : { ok: false, reason: extracted.reason }
    },
    parseAggregate: (chunks) => parseAggregateReport(chunks),
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
    aggregates: createAggregateWriter(deps.database, deps.boss, deps.sliceMs),
  }
}

// Reports of one account name the same few domains over and over: a verified match is remembered
// for a few seconds per process (only matches: a domain verified a moment ago is seen at once).
const domainCaches = new WeakMap<IngestJobDeps, (key: string) => Promise<DomainMatch>>()
function domainResolver(deps: IngestJobDeps) {
  let cached = domainCaches.get(deps)
  if (cached === undefined) {
    cached = cacheFound(
      (key) => {
        const [accountId, policyDomain] = key.split('\u0000') as [string, string]
        return resolveReportDomain(deps.database.db, accountId, policyDomain)
      },
      { ttlMs: 10_000, max: 10_000, now: () => deps.now().getTime(), found: (match) => match.ok },
    )
    domainCaches.set(deps, cached)
  }
  const lookup = cached
  return (accountId: string, policyDomain: string) => lookup(`${accountId}\u0000${policyDomain}`)
}

/** What became of a message: `skipped` when it was not pending (processed already, or gone). */
export type MessageResult =
  | { status: 'processed'; outcomes: PayloadOutcome[] }
  | { status: 'quarantined'; reason: QuarantineReason; outcomes: PayloadOutcome[] }
  | { status: 'skipped' }

/** A processed message waiting to be marked with the rest of its batch (see ingestJobs). */
export interface ProcessedMark {
  id: string
  outcome: unknown
  outcomes: PayloadOutcome[]
}

/**
 * Processes one message. With `marks`, a processed message is not marked here but added to `marks`
 * for the batch to mark in one statement; until then it is still pending, and a retry finds its
 * reports already stored (deduplicated) and acknowledges them.
 */
export async function processMessage(
  deps: IngestJobDeps,
  messageId: string,
  marks?: ProcessedMark[],
): Promise<MessageResult> {
  const message = await deps.messages.load(messageId)
  // Already handled (a retry after a crash past the commit) or gone: nothing to do.
  if (message === null || message.status !== 'pending' || (message.raw === null && message.pieces === 0))
    return { status: 'skipped' }
  const resolve = domainResolver(deps)
  const ctx: PayloadContext = {
    accountId: message.accountId,
    messageId,
    resolveDomain: (policyDomain) => resolve(message.accountId, policyDomain),
  }
  // Admitted by size: large messages wait while others hold the budget (docs/ingestion.md, "Memory").
  const release = await (deps.budget ?? unlimited).acquire(message.size)
  let result: Awaited<ReturnType<typeof processPayloads>>
  try {
    // The message is read from the database a piece at a time, as the parser asks for it.
    result = await processPayloads(processDeps(deps), deps.messages.body(message), ctx)
  } finally {
    release()
  }
  const outcome = result.outcomes.map((o) =>
    o.status === 'quarantine' ? { status: o.status, ...o.reason } : o,
  )
  if (result.ok && marks !== undefined) {
    marks.push({ id: messageId, outcome, outcomes: result.outcomes })
  } else if (result.ok) {
    await deps.messages.markProcessed(messageId, outcome, deps.now())
    countStored(result.outcomes)
  } else {
    await deps.messages.quarantine(messageId, result.reason, deps.now())
    ingestMessages.inc({ outcome: 'quarantined' })
    deps.logger.warn('report message quarantined', {
      message_id: messageId,
      code: result.reason.code,
      reason: result.reason.message,
    })
    return { status: 'quarantined', reason: result.reason, outcomes: result.outcomes }
  }
  return { status: 'processed', outcomes: result.outcomes }
}

const unlimited = new ByteBudget(Number.POSITIVE_INFINITY)

/** Metrics, counted after the commit so a retried job does not count twice what it stored once. */
function countStored(outcomes: PayloadOutcome[]): void {
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

const BATCH_CONCURRENCY = 4

export function ingestJobs(deps: IngestJobDeps): JobHandler[] {
  // Reports should show up within a second of arriving: poll often, and take jobs in batches.
  const processMessages = handle(
    PROCESS_MESSAGE,
    // Measured with bench:ingest (docs/ingestion.md): batches of 16, two fetch loops and four
    // messages in flight per batch gave the best end-to-end rate on two cores; fetching goes on
    // without pause while batches come back full.
    { batchSize: 16, localConcurrency: 2, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
    async (jobs) => {
      // Four messages at a time within a batch: while one waits on the database another parses.
      // Every message is finished before the batch reports, and a failed batch is retried whole;
      // messages already stored are no longer pending then, so a retry skips them.
      // Processed messages are marked together, one statement per batch instead of one per message.
      let next = 0
      const marks: ProcessedMark[] = []
      const results = await Promise.allSettled(
        Array.from({ length: BATCH_CONCURRENCY }, async () => {
          while (next < jobs.length) await processMessage(deps, jobs[next++]!.data.messageId, marks)
        }),
      )
      await deps.messages.markProcessedMany(marks, deps.now())
      for (const mark of marks) countStored(mark.outcomes)
      const failed = results.find((r) => r.status === 'rejected')
      if (failed !== undefined) throw failed.reason
    },
  )
  const enrich = handle(ENRICH_SOURCES, async () => {
    const looked = await enrichSources(
      { db: deps.database.db, dns: deps.dns, now: deps.now },
      { limit: deps.enrichPtr?.perRun ?? 1000, concurrency: deps.enrichPtr?.concurrency },
    )
    if (looked > 0) deps.logger.info('source IPs enriched', { count: looked })
  })
  return [processMessages, enrich]
}
