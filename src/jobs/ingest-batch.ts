import type { PayloadOutcome } from '../../domain/ingest/process-message.ts'
import { type HeldReport, holdSmallReports, settle } from '../../domain/ingest/report-batch.ts'
import { isForeignKeyViolation } from '../../infrastructure/db/errors.ts'
import { held, processPacer } from '../../infrastructure/runtime/gc-pacer.ts'
import {
  countStored,
  type IngestJobDeps,
  isPending,
  outcomeOf,
  quarantineMessage,
  type ReadMessage,
  readMessage,
} from './ingest.ts'
import { digestInOwnProcess, ownProcessFor } from './own-process.ts'

// A worker's batch of messages (docs/ingestion.md, "The queue"): one statement loads them, each is
// read through with its small reports held back (domain/ingest/report-batch.ts), then one
// transaction stores every held report and marks the processed messages. Exactly once: until that
// commit nothing of the batch's small reports exists and its messages are pending, so a batch
// retried after a crash stores everything once. A bad message never fails its neighbours: a parse
// problem is found while the message is read, before anything is held, and quarantines that
// message alone (after the commit, so the reports it held before the problem are stored first,
// as one by one); a transaction that fails is retried one message at a time, so only the message
// it was about stays pending for the job's retry.

/** Messages read at once within a batch: while one waits on the database another parses. */
const BATCH_CONCURRENCY = 4

/** Messages up to this size come with the batch's one load; larger ones are loaded one by one. */
const INLINE_BYTES = 64 * 1024

interface Read {
  id: string
  held: HeldReport[]
  result: ReadMessage
  /** The outcomes with the held reports' final results, once committed. */
  final?: PayloadOutcome[]
}

async function commit(deps: IngestJobDeps, reads: Read[]): Promise<void> {
  await deps.batches.commit(
    reads.flatMap((read) => read.held),
    (results) => {
      const marks = []
      let at = 0
      for (const read of reads) {
        read.final = settle(read.result.outcomes, results.slice(at, at + read.held.length))
        at += read.held.length
        if (read.result.ok) marks.push({ id: read.id, outcome: outcomeOf(read.final) })
      }
      return marks
    },
    deps.now(),
  )
}

/**
 * A message whose job is on its last attempt and still cannot be stored is quarantined
 * (`storage_failed`, with the last error), so it shows in GET /ingest/quarantine and can be retried
 * by hand, instead of staying pending with no job once pg-boss gives up. False when even that
 * fails (the database still gone): the job then fails for good and the message stays pending.
 */
async function giveUp(deps: IngestJobDeps, messageId: string, error: unknown): Promise<boolean> {
  const message = `storing failed on every attempt: ${error instanceof Error ? error.message : String(error)}`
  try {
    await quarantineMessage(deps, messageId, { code: 'storage_failed', message })
    return true
  } catch {
    return false
  }
}

/** `lastAttempt`: the messages whose job pg-boss will not retry again (src/jobs/ingest.ts). */
export async function processBatch(
  deps: IngestJobDeps,
  ids: string[],
  lastAttempt: ReadonlySet<string> = new Set(),
): Promise<void> {
  // No pause collection while the batch's messages are read and stored, its commit included
  // (infrastructure/runtime/gc-pacer.ts).
  try {
    await held(processPacer, () => processHeld(deps, ids, lastAttempt))
  } catch (error) {
    if (!isForeignKeyViolation(error) || deps.reportDomains.forget === undefined) throw error
    // A domain matched from the process's cache is gone: deleted, or removed and added again (as
    // the demo is). Its reports' stores were refused, and pg-boss's retry (30 s on) matched the
    // stale id again while the entry lived. Forget the matches and read what is left once more.
    deps.logger.info('report batch refused by a foreign key; reading it again with fresh domains', {
      messages: ids.length,
    })
    deps.reportDomains.forget()
    await held(processPacer, () => processHeld(deps, ids, lastAttempt))
  }
}

async function processHeld(deps: IngestJobDeps, ids: string[], lastAttempt: ReadonlySet<string>) {
  // In the batch's order (the queue's, so arrival order): of duplicates within it, the first is stored.
  const loaded = new Map(
    (await deps.messages.loadMany(ids, INLINE_BYTES)).map((message) => [message.id, message]),
  )
  const messages = ids.flatMap((id) => loaded.get(id) ?? []).filter((m) => m.withheld || isPending(m))
  const slots: (Read | undefined)[] = []
  const failures: unknown[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: BATCH_CONCURRENCY }, async () => {
      while (next < messages.length) {
        const index = next++
        const listed = messages[index]!
        const { writer, held } = holdSmallReports(deps.aggregates)
        try {
          // A large message is digested by a process of its own, which reads, stores and marks it:
          // its body is not loaded here.
          const own = ownProcessFor(deps, listed.size)
          if (own !== undefined && listed.status === 'pending') {
            await digestInOwnProcess(deps, own, listed.id)
            continue
          }
          const message = listed.withheld ? await deps.messages.load(listed.id) : listed
          if (!isPending(message)) continue
          const result = await readMessage({ ...deps, aggregates: writer }, message)
          slots[index] = { id: listed.id, held, result }
        } catch (error) {
          // Storage trouble (its large report, a failure or TLS report): the message stays pending
          // and the batch is retried; what it held is dropped, stored by the retry.
          if (lastAttempt.has(listed.id) && (await giveUp(deps, listed.id, error))) continue
          failures.push(error)
        }
      }
    }),
  )
  const reads = slots.filter((read) => read !== undefined)
  let committed = reads
  try {
    await commit(deps, reads)
  } catch (batchError) {
    deps.logger.warn('report batch failed; storing its messages one at a time', {
      messages: reads.length,
      error: batchError instanceof Error ? batchError.message : String(batchError),
    })
    committed = []
    for (const read of reads) {
      try {
        await commit(deps, [read])
        committed.push(read)
      } catch (error) {
        deps.logger.error('report message could not be stored; its job will retry', {
          message_id: read.id,
          error: error instanceof Error ? error.message : String(error),
        })
        if (lastAttempt.has(read.id) && (await giveUp(deps, read.id, error))) continue
        failures.push(error)
      }
    }
  }
  for (const read of committed) {
    if (read.result.ok) countStored(read.final ?? read.result.outcomes)
    else await quarantineMessage(deps, read.id, read.result.reason)
  }
  // pg-boss retries the batch: what was committed is no longer pending and is skipped.
  if (failures.length > 0) throw failures[0]
}
