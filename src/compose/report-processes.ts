import { fileURLToPath } from 'node:url'
import { REPORT_SOURCE_PAGE } from '../../domain/alerts/evaluation.ts'
import { concurrencyLimit } from '../../domain/shared/concurrency-limit.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import {
  type DomainJob,
  EVALUATE_REPORT_ALERTS,
  PROCESS_MESSAGE,
  type QueueSpec,
} from '../../infrastructure/queue/catalogue.ts'
import {
  type ChildRun,
  type ReportProcesses,
  reportProcesses,
} from '../../infrastructure/runtime/report-process.ts'
import type { Config } from '../config.ts'

// Report processes: heavy report work of a ROLE=all service on PostgreSQL done by a short-lived
// process of its own at a lower CPU priority (src/report-process.ts; docs/ingestion.md, "Large
// messages in a process of their own"): a large message's digestion, and the report rules of a
// domain whose day has many sources.

/** What a report process is asked to do (src/report-process.ts). */
export type ReportTask =
  | { kind: 'message'; messageId: string }
  | { kind: 'report-rules'; accountId: string; domainId: number }

/**
 * From what size a message is digested by a report process, or null for never: with the API in
 * this process (ROLE=all) on PostgreSQL, INGEST_PROCESS_BYTES. The embedded database has one
 * holder, and ROLE=worker has no API to protect. The service sets it in its runtime (src/main.ts);
 * the CLI and tests of the job in one process do not.
 */
export function reportProcessBytes(config: Config, database: Database): number | null {
  return config.role === 'all' &&
    database.kind === 'postgres' &&
    database.socketPath === undefined &&
    config.ingestProcessBytes > 0
    ? config.ingestProcessBytes
    : null
}

/**
 * A domain's report rules go to a report process from this many sources in their day: ten pages
 * of the evaluation (REPORT_SOURCE_PAGE), ~150 ms of work here; 100,000 sources take ~3 s.
 */
export const REPORT_RULES_PROCESS_SOURCES = 10 * REPORT_SOURCE_PAGE

/** The settings a report process works with: its parent's, for what its task reads (no secrets). */
export function reportProcessSettings(config: Config, databaseUrl: string) {
  return {
    databaseUrl,
    logLevel: config.logLevel,
    ingestProcessNice: config.ingestProcessNice,
    ingestMaxReportBytes: config.ingestMaxReportBytes,
    ingestWorkerMaxBytes: config.ingestWorkerMaxBytes,
    ingestWorkerConcurrency: config.ingestWorkerConcurrency,
    ingestParseThreadBytes: config.ingestParseThreadBytes,
    dnsServers: config.dnsServers,
    dnsTimeoutMs: config.dnsTimeoutMs,
  } satisfies Partial<Config>
}
export type ReportProcessSettings = ReturnType<typeof reportProcessSettings> & {
  /** How long a process started ahead of its task waits for one (30 s; tests set it shorter). */
  idleMs?: number
}

/**
 * At most two report processes at work at once per service (each takes a core, and up to ~230 MB
 * while a 100,000-record report streams). One runner per database and settings, so that the intake
 * warms the process its job will use (`reportProcessWarmer`).
 */
const gate = concurrencyLimit(2)
const entry = fileURLToPath(new URL('../report-process.ts', import.meta.url))
const runners = new Map<string, ReportProcesses>()

/** A task of `queue`'s jobs is killed a minute before its job would expire. */
const timeoutOf = (queue: QueueSpec<object>) =>
  Math.max(30, (queue.options.expireInSeconds ?? 900) - 60) * 1000

function runnerFor(config: Config, database: Database): ReportProcesses | null {
  if (database.kind !== 'postgres') return null
  const settings = reportProcessSettings(config, database.url)
  const key = JSON.stringify(settings)
  let runner = runners.get(key)
  if (runner === undefined) {
    runner = reportProcesses({ entry, settings, gate })
    runners.set(key, runner)
  }
  return runner
}

/**
 * Messages of `minBytes` or more digested by report processes (IngestJobDeps.ownProcess); none
 * where the service uses none (reportProcessBytes).
 */
export function messageProcess(
  minBytes: number | null,
  config: Config,
  database: Database,
): { minBytes: number; run: (messageId: string) => Promise<ChildRun> } | undefined {
  const runner = minBytes === null ? null : runnerFor(config, database)
  if (minBytes === null || runner === null) return undefined
  const timeoutMs = timeoutOf(PROCESS_MESSAGE)
  return {
    minBytes,
    run: (messageId) =>
      runner.run(`message ${messageId}`, { kind: 'message', messageId } satisfies ReportTask, timeoutMs),
  }
}

/**
 * Starts a report process ahead of a message of `bytes` that will need one (its intake has begun):
 * its code is loaded and its connections are open by the time its job runs.
 */
export function reportProcessWarmer(
  minBytes: number | null,
  config: Config,
  database: Database,
): ((bytes: number) => void) | undefined {
  const runner = minBytes === null ? null : runnerFor(config, database)
  if (minBytes === null || runner === null) return undefined
  return (bytes) => {
    if (bytes >= minBytes) runner.warm()
  }
}

/** The report rules' report process for the alert jobs (src/jobs/alerts.ts), or none. */
export function reportRulesProcess(runtime: {
  config: Config
  database: Database
  reportProcessBytes?: number | null
}): { minSources: number; run: (ref: DomainJob) => Promise<ChildRun> } | undefined {
  const runner = runtime.reportProcessBytes == null ? null : runnerFor(runtime.config, runtime.database)
  if (runner === null) return undefined
  const timeoutMs = timeoutOf(EVALUATE_REPORT_ALERTS)
  return {
    minSources: REPORT_RULES_PROCESS_SOURCES,
    run: (ref) =>
      runner.run(
        `report rules ${ref.domainId}`,
        { kind: 'report-rules', accountId: ref.accountId, domainId: ref.domainId } satisfies ReportTask,
        timeoutMs,
      ),
  }
}
