import { readFileSync } from 'node:fs'
import { evaluateReports } from '../domain/alerts/evaluation.ts'
import { errorFields } from '../domain/shared/logger.ts'
import { batchedStdout, jsonLogger } from '../infrastructure/logging/json-logger.ts'
import { startBoss } from '../infrastructure/queue/pg-boss.ts'
import { setProcessNice } from '../infrastructure/runtime/process-priority.ts'
import type { ChildAnswer, ChildMessage } from '../infrastructure/runtime/report-process.ts'
import { alertEvaluationDeps } from './compose/alerts.ts'
import { resolvers } from './compose/dns.ts'
import { messageProcessDeps } from './compose/ingest.ts'
import type { ReportProcessSettings, ReportTask } from './compose/report-processes.ts'
import { stores } from './compose/stores.ts'
import { type Config, loadConfig } from './config.ts'
import { processMessage } from './jobs/ingest.ts'
import { openDatabase } from './open-database.ts'

// A report process: heavy report work of a ROLE=all service on PostgreSQL, done in a process of
// its own at a lower CPU priority (infrastructure/runtime/report-process.ts; docs/ingestion.md,
// "Large messages in a process of their own"). Its parent sends one task and its settings over
// IPC: a large message to digest, or a domain's report rules to evaluate. It runs the jobs' own
// code (the same stores, transactions and queue), answers over IPC and exits.

if (process.send === undefined) {
  console.error('src/report-process.ts is started by the service (ROLE=all on PostgreSQL), not by hand')
  process.exit(2)
}
const send = process.send.bind(process)
const answer = (message: ChildAnswer) =>
  new Promise<void>((resolve) => send(message, undefined, undefined, () => resolve()))

// Its parent gone (stopped, or killed), the work has no one to answer: the open transaction rolls
// back with the connection and the job's retry does the work again.
process.on('disconnect', () => process.exit(1))

/**
 * This process's peak RSS: the kernel's high-water mark of its own memory (VmHWM), which starts
 * afresh with the exec. Not getrusage's ru_maxrss: Linux carries the parent's figure at the fork
 * into it, so a child of a 290 MB service reads 290 MB whatever it used itself.
 */
function ownPeakRss(): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
    return kb === null ? undefined : Number(kb[1]) * 1024
  } catch {
    return undefined
  }
}

/** A process started ahead of its task (warmed at intake) that gets none exits after this. */
const IDLE_MS = 30_000

const inbox: ChildMessage[] = []
let delivered: (() => void) | null = null
process.on('message', (message) => {
  inbox.push(message as ChildMessage)
  delivered?.()
})
async function next(timeoutMs: number): Promise<ChildMessage | null> {
  if (inbox.length === 0) {
    let timer: Timer | undefined
    await new Promise<void>((resolve) => {
      delivered = resolve
      timer = setTimeout(resolve, timeoutMs)
    })
    clearTimeout(timer)
    delivered = null
  }
  return inbox.shift() ?? null
}

// First the parent's settings; no API here, so no CPU slices (WORKER_SLICE_MS), and no report
// process of its own again (ROLE=worker builds none).
const first = await next(IDLE_MS)
if (first === null || !('settings' in first)) process.exit(2)
const settings = first.settings as ReportProcessSettings
const config: Config = { ...loadConfig({}), ...settings, role: 'worker', workerSliceMs: 0 }
if (config.ingestProcessNice > 0) setProcessNice(config.ingestProcessNice)
const logger = jsonLogger(config.logLevel, batchedStdout())
const now = () => new Date()

// Connected while the task is on its way; a failure here is the task's answer.
const ready = (async () => {
  if (config.databaseUrl === null) throw new Error('a report process needs PostgreSQL (DATABASE_URL)')
  const database = await openDatabase(config, { serveSocket: false, poolSize: 2 })
  try {
    return { database, boss: await startBoss(database, { background: false }) }
  } catch (error) {
    await database.close()
    throw error
  }
})()
ready.catch(() => {})

const sent = await next(settings.idleMs ?? IDLE_MS)
if (sent === null || !('task' in sent)) {
  // Warmed for a message whose job went elsewhere (another process, or it failed first).
  await ready.then(
    ({ boss, database }) => boss.stop({ graceful: false, close: true }).then(() => database.close()),
    () => {},
  )
  process.exit(0)
}
const task = sent.task as ReportTask
let failed = false
try {
  const { database, boss } = await ready
  const rssAtTaskBytes = process.memoryUsage.rss()
  try {
    const result =
      task.kind === 'message'
        ? await processMessage(messageProcessDeps({ config, database, logger, now, boss }), task.messageId)
        : await evaluateReports(
            alertEvaluationDeps(stores(database, boss), { ...resolvers(config, now), now }),
            {
              accountId: task.accountId,
              domainId: task.domainId,
            },
          )
    await answer({ ok: true, result, rssAtTaskBytes, peakRssBytes: ownPeakRss() })
  } finally {
    await boss.stop({ graceful: false, close: true })
    await database.close()
  }
} catch (error) {
  failed = true
  logger.error('report process failed', { task: sent.label, ...errorFields(error) })
  await answer({ ok: false, error: error instanceof Error ? error.message : String(error) })
}
process.exit(failed ? 1 : 0)
