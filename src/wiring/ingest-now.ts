import { type ImportOutcome, importOutcome } from '../../domain/ingest/import-outcome.ts'
import type { AcceptInput, AcceptMessage } from '../../domain/ingest/intake.ts'
import type { Gate } from '../../domain/shared/concurrency-limit.ts'
import type { Result } from '../../domain/shared/result.ts'
import { type IngestJobDeps, processMessage } from '../jobs/ingest.ts'

// Intake with the outcome: the message is accepted as any other (one durable write, its job queued
// but delayed), then processed here by the job's own code, so the caller learns at once whether its
// report was stored, a duplicate, or quarantined and why. Used by POST /api/v1/ingest/reports,
// `cli import` and the dashboard upload (docs/ingestion.md).

export interface IngestNowDeps {
  accept: AcceptMessage
  job: IngestJobDeps
  /** How many messages this process works on inline at once; the others wait (memory, CPU). */
  gate: Gate
}

export type IngestNow = (input: Omit<AcceptInput, 'processInline'>) => Promise<Result<ImportOutcome>>

export function ingestNow(deps: IngestNowDeps): IngestNow {
  return async (input) => {
    const accepted = await deps.accept({ ...input, processInline: true })
    if (!accepted.ok) return accepted
    const id = accepted.value.id
    try {
      const result = await deps.gate(() => processMessage(deps.job, id))
      return {
        ok: true,
        value: importOutcome(id, result.status === 'skipped' ? { status: 'pending' } : result),
      }
    } catch (error) {
      // Storage trouble: the message is stored and its (delayed) job will process it, as for mail.
      deps.job.logger.error('inline report processing failed; the queued job will retry', {
        message_id: id,
        error: error instanceof Error ? error.message : String(error),
      })
      return { ok: true, value: importOutcome(id, { status: 'pending' }) }
    }
  }
}
