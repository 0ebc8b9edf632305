import { ingestMessages } from '../../infrastructure/metrics/instruments.ts'
import { type ChildRun, childRunFields } from '../../infrastructure/runtime/report-process.ts'
import { countStored, type MessageJobDeps, type MessageResult } from './ingest.ts'

// A large message digested by a report process of its own (ROLE=all on PostgreSQL;
// infrastructure/runtime/report-process.ts runs src/report-process.ts): the job's two paths, one
// message and a batch, hand it over here (docs/ingestion.md, "Large messages in a process of their
// own").

/** The report process that digests a message this large, if any (IngestJobDeps.ownProcess). */
export const ownProcessFor = (deps: MessageJobDeps, bytes: number) =>
  deps.ownProcess !== undefined && bytes >= deps.ownProcess.minBytes ? deps.ownProcess.run : undefined

/**
 * A large message digested by a process of its own (infrastructure/runtime/report-process.ts):
 * it stores and marks the message itself; this process counts what it did. Its failure is thrown,
 * as storage trouble here would be: the message is still pending and the job is retried.
 */
export async function digestInOwnProcess(
  deps: Pick<MessageJobDeps, 'logger'>,
  run: (messageId: string) => Promise<ChildRun>,
  messageId: string,
): Promise<MessageResult> {
  const child = await run(messageId)
  const result = child.result as MessageResult | null
  if (result?.status === 'processed') countStored(result.outcomes)
  else if (result?.status === 'quarantined') ingestMessages.inc({ outcome: 'quarantined' })
  else if (result?.status !== 'skipped')
    throw new Error(`the report process for message ${messageId} answered ${JSON.stringify(result)}`)
  deps.logger.info('message digested by a report process', {
    message_id: messageId,
    status: result.status,
    ...childRunFields(child),
  })
  return result
}
