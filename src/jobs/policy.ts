import type { PgBoss } from 'pg-boss'
import type { ProgressionDeps } from '../../domain/policy/ports.ts'
import { runProgression } from '../../domain/policy/use-cases.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { PROGRESS_DOMAIN, SCHEDULE_PROGRESSION, send } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

// DMARC policy progression (issue #6, docs/policy-progression.md). Once a day a cron job (run once
// across all workers by pg-boss) lists the verified domains with a hosted DMARC record and
// automation other than manual, and enqueues one job each; the per-domain job decides and acts:
// automatic domains advance (or roll back) through the hosted record with a `dmarc.progressed`
// event, assisted ones get a proposal to approve. A decision never depends on when in the day it
// runs: readiness is over whole report days. A domain whose `_dmarc` TXT is on a connected DNS
// provider has it written through the provider; a write that fails leaves the previous record in
// place and fails the job, which pg-boss retries (docs/policy-progression.md).

const BATCH = 500

export interface PolicyJobDeps {
  progression: ProgressionDeps
  logger: Logger
}

export class ProgressionWriteFailed extends Error {}

export function policyJobs(boss: PgBoss, deps: PolicyJobDeps): JobHandler[] {
  const { progression } = deps
  return [
    handle(SCHEDULE_PROGRESSION, async () => {
      let after = 0
      for (;;) {
        const due = await progression.store.candidates(after, BATCH)
        for (const candidate of due) {
          const job = { accountId: candidate.accountId, domainId: candidate.domainId }
          await send(boss, PROGRESS_DOMAIN, job, { singletonKey: String(candidate.domainId) })
        }
        if (due.length < BATCH) break
        after = due.at(-1)!.domainId
      }
    }),
    // Database and DNS provider failures throw and are retried; DNS failures end in a hold (decided again tomorrow),
    // and a record edited meanwhile is a conflict, not an error.
    handle(PROGRESS_DOMAIN, { batchSize: 4 }, async (jobs) => {
      for (const job of jobs) {
        const { outcome, decision, error } = await runProgression(progression, job.data)
        const fields = { domainId: job.data.domainId, outcome, reason: decision?.reason ?? null }
        if (outcome === 'failed') {
          // A failed write is in dns_provider_writes (status failed), a failed read on the
          // connection (read_failed_at): the alert rules read them.
          deps.logger.warn('DMARC policy progression: the DNS provider failed', { ...fields, error })
          throw new ProgressionWriteFailed(`domain ${job.data.domainId}: ${error}`)
        }
        if (outcome === 'advanced' || outcome === 'rolled_back' || outcome === 'proposed')
          deps.logger.info('DMARC policy progression', fields)
        else deps.logger.debug('DMARC policy progression', fields)
      }
    }),
  ]
}
