import type { PgBoss } from 'pg-boss'
import { acceptMessage, type NewIngestMessage } from '../../domain/ingest/accept.ts'
import type { AcceptMessage, KnowsRecipient } from '../../domain/ingest/intake.ts'
import type { ReportDomainLookup } from '../../domain/ingest/ports.ts'
import type { DomainMatch } from '../../domain/ingest/process-message.ts'
import { ingestKeyOf } from '../../domain/ingest/routing.ts'
import { concurrencyLimit } from '../../domain/shared/concurrency-limit.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { cacheFound } from '../../infrastructure/cache/found-cache.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { enqueueReportAlerts } from '../../infrastructure/queue/alert-triggers.ts'
import { PROCESS_MESSAGE } from '../../infrastructure/queue/catalogue.ts'
import { localWorkerWake } from '../../infrastructure/queue/wake.ts'
import { pgReportBatchStore } from '../../infrastructure/repositories/aggregate-report-batch.ts'
import { mergePendingRollups } from '../../infrastructure/repositories/aggregate-report-merge.ts'
import { createAggregateWriter } from '../../infrastructure/repositories/aggregate-report-writer.ts'
import { pgForensicTlsStore } from '../../infrastructure/repositories/pg-forensic-tls-store.ts'
import {
  MESSAGE_PIECE_BYTES,
  pgIngestMessageStore,
} from '../../infrastructure/repositories/pg-ingest-message-store.ts'
import { resolveReportDomain } from '../../infrastructure/repositories/pg-report-domains.ts'
import { enrichSources } from '../../infrastructure/repositories/pg-source-enrichment.ts'
import { collectGarbage } from '../../infrastructure/runtime/gc-pacer.ts'
import type { Runtime } from '../compose.ts'
import { ByteBudget } from '../jobs/byte-budget.ts'
import type { IngestJobDeps, MessageJobDeps } from '../jobs/ingest.ts'
import { type IngestNow, ingestNow } from '../wiring/ingest-now.ts'
import { messageProcess, reportProcessWarmer } from './report-processes.ts'

// Report intake's wiring: the one accept function every path calls, the report job's deps, and
// intake with the outcome for the paths that process at once (docs/ingestion.md).

/** The account's verified domain a report is about, looked up in the database. */
export const reportDomains = (database: Database) => (accountId: string, policyDomain: string) =>
  resolveReportDomain(database.db, accountId, policyDomain)

export const sha256Hex = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')

/**
 * Wakes the ingest worker of this process (ROLE=all: the API's intake and the worker in one
 * process), coalesced (infrastructure/queue/wake.ts). After a message stored in pieces it first
 * collects the intake's garbage (its hex pieces, the request's buffers): the worker used to start on
 * the message up to 500 ms later, and starting at once on top of that garbage raised a 100,000-record
 * report's peak RSS from 228-235 MB to 247-262 MB (docs/ingestion.md, "Waking the local worker").
 * Not for a message of `ownProcessBytes` or more: a process of its own digests it (reportProcessBytes),
 * so nothing here grows on top of that garbage, and the collection would only stall the API.
 */
export function localIngestWake(
  boss: PgBoss,
  logger: Logger,
  ownProcessBytes: number | null = null,
): (bytes: number) => void {
  const wake = localWorkerWake(boss, PROCESS_MESSAGE, logger)
  return (bytes) => {
    // Queued before the wake's own turn, so it runs first; never inside the caller's turn.
    if (bytes > MESSAGE_PIECE_BYTES && (ownProcessBytes === null || bytes < ownProcessBytes))
      setImmediate(collectGarbage)
    wake()
  }
}

/** The one intake function every path (HTTP, CLI, IMAP, SMTP) calls. */
export function intake(
  runtime: Pick<Runtime, 'config' | 'database' | 'boss' | 'now' | 'wakeIngest' | 'reportProcessBytes'>,
) {
  const store = pgIngestMessageStore(runtime.database.db, runtime.boss)
  // Every message looks its account up by ingest key: cached briefly (docs/ingestion.md).
  const accountByIngestKey = cacheFound((key) => store.accountByIngestKey(key), {
    ttlMs: 30_000,
    max: 10_000,
    now: () => runtime.now().getTime(),
  })
  // With the worker in this process, a message's job is fetched as soon as its statement has
  // committed instead of at the worker's next poll (docs/ingestion.md, "Waking the local worker").
  // A deferred job (processed inline by the caller) is not due: nothing to wake for.
  const wake = runtime.wakeIngest
  // A message that a report process will digest has one started while its pieces are written
  // (src/compose/report-processes.ts): ~0.25 s of loading and connecting off the report's path.
  const warm = reportProcessWarmer(runtime.reportProcessBytes ?? null, runtime.config, runtime.database)
  const messages = {
    ...store,
    accountByIngestKey,
    async insertAndEnqueue(message: NewIngestMessage) {
      warm?.(message.body.size)
      const id = await store.insertAndEnqueue(message)
      if (!message.deferJob) wake?.(message.body.size)
      return id
    },
    async retry(accountId: string, id: string) {
      const queued = await store.retry(accountId, id)
      if (queued) wake?.(0)
      return queued
    },
  }
  const accept: AcceptMessage = (input) =>
    acceptMessage(
      {
        messages,
        ingestDomain: runtime.config.ingestDomain,
        maxBytes: runtime.config.ingestMaxMessageBytes,
        sha256: sha256Hex,
        now: runtime.now,
      },
      input,
    )
  const knowsRecipient: KnowsRecipient = async (address) => {
    const key = ingestKeyOf(address, runtime.config.ingestDomain)
    return key !== null && (await messages.accountByIngestKey(key)) !== null
  }
  return { messages, accept, knowsRecipient }
}

export type Intake = ReturnType<typeof intake>

/**
 * Reports of one account name the same few domains over and over: a verified match is remembered
 * for a few seconds per process (only matches: a domain verified a moment ago is seen at once).
 */
function cachedReportDomains(lookup: ReportDomainLookup, now: () => Date): ReportDomainLookup {
  const cached = cacheFound(
    (key): Promise<DomainMatch> => {
      const [accountId, policyDomain] = key.split('\u0000') as [string, string]
      return lookup(accountId, policyDomain)
    },
    { ttlMs: 10_000, max: 10_000, now: () => now().getTime(), found: (match) => match.ok },
  )
  const matched = (accountId: string, policyDomain: string) => cached(`${accountId}\u0000${policyDomain}`)
  return Object.assign(matched, { forget: cached.clear })
}

/**
 * What the report job needs: the worker's, and the same for callers that process inline. The
 * stores are the process's own (src/compose/stores.ts; with the queue, stored failure and TLS
 * reports enqueue their alert rules: infrastructure/queue/alert-triggers.ts).
 */
export function ingestJobDeps(
  runtime: Pick<Runtime, 'config' | 'database' | 'dns' | 'logger' | 'now' | 'boss' | 'reportProcessBytes'>,
  stores: Pick<IngestJobDeps, 'messages' | 'forensicTls'>,
): IngestJobDeps {
  const { config, database, dns, now } = runtime
  return {
    ...messageJobDeps(runtime, stores),
    batches: pgReportBatchStore(database, runtime.boss, runtime.logger),
    mergeRollups: async (job) => {
      const merged = await mergePendingRollups(database, job.reportId)
      if (merged > 0 && runtime.boss !== null)
        await enqueueReportAlerts(runtime.boss, [{ accountId: job.accountId, domainId: job.domainId }])
      return merged
    },
    enrichSources: (input) =>
      enrichSources({ db: database.db, dns, now }, { ...input, concurrency: config.enrichPtr.concurrency }),
    enrichPtr: config.enrichPtr,
    ownProcess: messageProcess(runtime.reportProcessBytes ?? null, config, database),
  }
}

/** What one message's reading and storing needs: the report process builds only this. */
function messageJobDeps(
  runtime: Pick<Runtime, 'config' | 'database' | 'logger' | 'now' | 'boss'>,
  { messages, forensicTls }: Pick<IngestJobDeps, 'messages' | 'forensicTls'>,
): MessageJobDeps {
  const { config, database, now } = runtime
  return {
    // The API shares this thread in ROLE=all: CPU slices (WORKER_SLICE_MS; docs/ingestion.md).
    aggregates: createAggregateWriter(database, {
      boss: runtime.boss,
      sliceMs: config.workerSliceMs,
      logger: runtime.logger,
    }),
    reportDomains: cachedReportDomains(reportDomains(database), now),
    messages,
    forensicTls,
    logger: runtime.logger,
    now: runtime.now,
    limits: {
      maxDecompressedBytes: config.ingestMaxReportBytes,
      maxZipEntries: 32,
      maxCompressionRatio: 1000,
      maxParts: 1000,
    },
    // Messages admitted by their bytes in flight (INGEST_WORKER_MAX_BYTES; docs/ingestion.md, "Memory").
    // and by their count (INGEST_WORKER_CONCURRENCY: in ROLE=all each is work ahead of the API's).
    budget: new ByteBudget(config.ingestWorkerMaxBytes, config.ingestWorkerConcurrency),
    parseThreadBytes: config.ingestParseThreadBytes,
  }
}

/** A report process's deps for a message: its own stores and queue (src/report-process.ts). */
export function messageProcessDeps(
  runtime: Pick<Runtime, 'config' | 'database' | 'logger' | 'now'> & { boss: PgBoss },
): MessageJobDeps {
  const store = pgIngestMessageStore(runtime.database.db, runtime.boss)
  return messageJobDeps(runtime, {
    messages: store,
    forensicTls: pgForensicTlsStore(runtime.database.db, runtime.boss),
  })
}

// Two files processed inline at once per process: a large report takes ~230 MB and a core while it
// streams (docs/ingestion.md), so more would only compete; the rest wait their turn.
const INLINE_CONCURRENCY = 2

/**
 * Intake that processes at once and answers with the outcome (POST /ingest/reports, cli import,
 * upload), on the process's intake and stores.
 */
export function reportImport(
  runtime: Pick<Runtime, 'config' | 'database' | 'dns' | 'logger' | 'now' | 'boss' | 'reportProcessBytes'>,
  deps: Pick<Intake, 'accept' | 'messages'> & Pick<IngestJobDeps, 'forensicTls'>,
): IngestNow {
  return ingestNow({
    accept: deps.accept,
    job: ingestJobDeps(runtime, deps),
    gate: concurrencyLimit(INLINE_CONCURRENCY),
  })
}
