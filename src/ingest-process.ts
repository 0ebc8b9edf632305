import { errorFields } from '../domain/shared/logger.ts'
import { batchedStdout, jsonLogger } from '../infrastructure/logging/json-logger.ts'
import { startBoss } from '../infrastructure/queue/pg-boss.ts'
import type { ChildAnswer, ChildTask } from '../infrastructure/runtime/message-process.ts'
import { setProcessNice } from '../infrastructure/runtime/process-priority.ts'
import { messageProcessDeps, type ReportProcessSettings } from './compose/ingest.ts'
import { type Config, loadConfig } from './config.ts'
import { processMessage } from './jobs/ingest.ts'
import { openDatabase } from './open-database.ts'

// One large report message digested in a process of its own, started by a ROLE=all service on
// PostgreSQL (infrastructure/runtime/message-process.ts; docs/ingestion.md, "Large messages in a
// process of their own"). Its parent sends the message id and its settings over IPC; it runs the
// job's own code (the same stores, transactions and queue), answers over IPC and exits.

if (process.send === undefined) {
  console.error('src/ingest-process.ts is started by the service (ROLE=all on PostgreSQL), not by hand')
  process.exit(2)
}
const send = process.send.bind(process)
const answer = (message: ChildAnswer) =>
  new Promise<void>((resolve) => send(message, undefined, undefined, () => resolve()))

// Its parent gone (stopped, or killed), the work has no one to answer: the open transaction rolls
// back with the connection and the job's retry processes the message.
process.on('disconnect', () => process.exit(1))

const task = await new Promise<ChildTask>((resolve) =>
  process.once('message', (m) => resolve(m as ChildTask)),
)
const settings = task.settings as ReportProcessSettings
// The parent's settings; no API here, so no CPU slices (WORKER_SLICE_MS), and no report process of
// its own again (ROLE=worker builds none).
const config: Config = { ...loadConfig({}), ...settings, role: 'worker', workerSliceMs: 0 }
if (config.ingestProcessNice > 0) setProcessNice(config.ingestProcessNice)
const logger = jsonLogger(config.logLevel, batchedStdout())
let failed = false
try {
  if (config.databaseUrl === null) throw new Error('a report process needs PostgreSQL (DATABASE_URL)')
  const database = await openDatabase(config, { serveSocket: false, poolSize: 2 })
  try {
    const boss = await startBoss(database, { background: false })
    try {
      const now = () => new Date()
      const deps = messageProcessDeps({ config, database, logger, now, boss })
      await answer({ ok: true, result: await processMessage(deps, task.messageId) })
    } finally {
      await boss.stop({ graceful: false, close: true })
    }
  } finally {
    await database.close()
  }
} catch (error) {
  failed = true
  logger.error('report process failed', { message_id: task.messageId, ...errorFields(error) })
  await answer({ ok: false, error: error instanceof Error ? error.message : String(error) })
}
process.exit(failed ? 1 : 0)
