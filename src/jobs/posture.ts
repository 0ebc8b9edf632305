import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { DomainStore } from '../../domain/domains/ports.ts'
import { verifyDomain } from '../../domain/domains/verification.ts'
import { type CheckDeps, checkDomain } from '../../domain/posture/check-domain.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { CHECK_DOMAIN, SCHEDULE_CHECKS, send, VERIFY_PENDING } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

// Posture checks and ownership re-checks in the background. A cron job (run once across all
// worker processes by pg-boss) finds due domains and enqueues one job each; the per-domain jobs
// are what several workers share. Each keeps the findings history that alert rules compare.

/** A domain is re-checked when its last check is older than this. */
export const RECHECK_AFTER_MS = 6 * 3600_000
const BATCH = 500
// Unverified domains are re-checked for a month after they were added, then left to the user.
const VERIFY_WINDOW_MS = 30 * 86_400_000

export function postureJobs(
  boss: PgBoss,
  deps: CheckDeps & {
    verificationDns: DnsResolver
    domains: DomainStore
    /** Re-queues messages still waiting for domains verified meanwhile (pg-domain-verification.ts). */
    requeueWaiting: () => Promise<number>
    now: () => Date
    logger: Logger
  },
): JobHandler[] {
  const scheduleChecks = handle(SCHEDULE_CHECKS, async () => {
    const due = await deps.checks.due(new Date(deps.now().getTime() - RECHECK_AFTER_MS), BATCH)
    for (const ref of due) {
      await send(boss, CHECK_DOMAIN, ref, { singletonKey: `${ref.accountId}:${ref.name}` })
    }
  })

  const checkDomains = handle(CHECK_DOMAIN, { batchSize: 4 }, async (jobs) => {
    for (const job of jobs) {
      const result = await checkDomain(deps, { ...job.data, now: deps.now() })
      // A domain deleted since it was queued is not an error worth retrying.
      if (!result.ok)
        deps.logger.info('posture check skipped', { domain: job.data.name, reason: result.failure.code })
    }
  })

  const verifyPending = handle(VERIFY_PENDING, async () => {
    const since = new Date(deps.now().getTime() - VERIFY_WINDOW_MS)
    for (const ref of await deps.domains.unverified(since, BATCH)) {
      await verifyDomain({ ...deps, dns: deps.verificationDns }, { ...ref, now: deps.now() })
    }
    // Verification re-queues its domain's waiting reports itself when the verifying process has a
    // queue; this catches the rest (a tool without one, more than one batch, a crash in between).
    const requeued = await deps.requeueWaiting()
    if (requeued > 0) deps.logger.info('reports waiting for verification queued again', { count: requeued })
  })
  return [scheduleChecks, checkDomains, verifyPending]
}
