import { ingestMessages } from '../../infrastructure/metrics/instruments.ts'
import { countStored, type MessageJobDeps, type MessageResult } from './ingest.ts'

// A large message digested by a report process of its own (ROLE=all on PostgreSQL;
// infrastructure/runtime/report-process.ts runs src/report-process.ts): the job's two paths, one
// message and a batch, hand it over here (docs/ingestion.md, "Large messages in a process of their
// own").

/** Whether a message this large is digested in a process of its own (IngestJobDeps.ownProcess). */
export const inOwnProcess = (deps: MessageJobDeps, bytes: number): boolean =>
  deps.ownProcess !== undefined && bytes >= deps.ownProcess.minBytes

/**
 * A large message digested by a process of its own (infrastructure/runtime/report-process.ts):
 * it stores and marks the message itself; this process counts what it did. Its failure is thrown,
 * as storage trouble here would be: the message is still pending and the job is retried.
 */
export async function digestInOwnProcess(deps: MessageJobDeps, messageId: string): Promise<MessageResult> {
  if (deps.ownProcess === undefined) throw new Error('no report process configured')
  const run = await deps.ownProcess.run(messageId)
  const result = run.result as MessageResult | null
  if (result?.status === 'processed') countStored(result.outcomes)
  else if (result?.status === 'quarantined') ingestMessages.inc({ outcome: 'quarantined' })
  else if (result?.status !== 'skipped')
    throw new Error(`the report process for message ${messageId} answered ${JSON.stringify(result)}`)
  deps.logger.info('message digested by a report process', {
    message_id: messageId,
    status: result.status,
    duration_ms: run.ms,
    cpu_ms: run.cpuMs,
    peak_rss_bytes: run.peakRssBytes,
    rss_at_task_bytes: run.rssAtTaskBytes,
    started_ahead: run.startedAhead,
  })
  return result
}
