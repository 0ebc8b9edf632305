import type { PgBoss } from 'pg-boss'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import type { DomainRef } from '../../infrastructure/repositories/pg-alert-facts.ts'
import type { AppliedPlan } from '../../infrastructure/repositories/pg-alert-store.ts'
import { alertWork, evaluateAccount, evaluatePosture, evaluateReports } from './alert-evaluation.ts'

// Alert evaluation jobs (issue #6, docs/alerts.md "Storage, jobs and API"). Three cron schedulers
// (run once across all workers by pg-boss) enqueue one job per domain or account; those jobs are
// what several workers share. Their queues are `stately` per key: a domain already waiting for an
// evaluation is not queued twice. A handler that throws is retried (database unavailable, DNS
// failure reading the SPF tree); a domain deleted meanwhile is simply skipped.
//
// Posture checks are stored by the posture jobs and by the API (GET /domains/{name}/status), so
// rather than a hook in one of them, a scheduler finds every domain checked in the last hour; the
// evaluation is idempotent (src/jobs/alert-evaluation.ts), so looking back further than the
// 15-minute interval costs little and lets a late run catch up.

export const SCHEDULE_POSTURE_ALERTS = 'alerts.schedule-posture'
export const EVALUATE_POSTURE_ALERTS = 'alerts.evaluate-posture'
export const SCHEDULE_REPORT_ALERTS = 'alerts.schedule-reports'
export const EVALUATE_REPORT_ALERTS = 'alerts.evaluate-reports'
export const SCHEDULE_OPERATIONS_ALERTS = 'alerts.schedule-operations'
export const EVALUATE_OPERATIONS_ALERTS = 'alerts.evaluate-operations'

export interface AlertJobDeps {
  database: Database
  logger: Logger
  now: () => Date
  /** For the SPF include tree that classifies report sources (the process's caching resolver). */
  dns: DnsResolver
}

interface AccountJob {
  accountId: string
}

const domainKey = (ref: DomainRef) => `${ref.accountId}:${ref.domainId}`

export async function registerAlertJobs(boss: PgBoss, deps: AlertJobDeps): Promise<void> {
  const work = alertWork(deps)
  // Posture: shortly after each check. Reports: hourly (reports arrive through the day and the
  // windows move at midnight UTC). Operations: every 15 minutes, offset from the posture run.
  await boss.schedule(SCHEDULE_POSTURE_ALERTS, '*/15 * * * *')
  await boss.schedule(SCHEDULE_REPORT_ALERTS, '23 * * * *')
  await boss.schedule(SCHEDULE_OPERATIONS_ALERTS, '7-59/15 * * * *')

  await boss.work(SCHEDULE_POSTURE_ALERTS, async () => {
    for (const ref of await work.postureDue())
      await boss.send(EVALUATE_POSTURE_ALERTS, ref, { singletonKey: domainKey(ref) })
  })
  await boss.work(SCHEDULE_REPORT_ALERTS, async () => {
    for (const ref of await work.reportsDue())
      await boss.send(EVALUATE_REPORT_ALERTS, ref, { singletonKey: domainKey(ref) })
  })
  await boss.work(SCHEDULE_OPERATIONS_ALERTS, async () => {
    for (const accountId of await work.accountsDue())
      await boss.send(EVALUATE_OPERATIONS_ALERTS, { accountId } satisfies AccountJob, {
        singletonKey: accountId,
      })
  })

  await boss.work<DomainRef>(EVALUATE_POSTURE_ALERTS, async ([job]) => {
    if (job !== undefined) logChanges(deps.logger, 'posture', job.data, await evaluatePosture(deps, job.data))
  })
  await boss.work<DomainRef>(EVALUATE_REPORT_ALERTS, async ([job]) => {
    if (job !== undefined) logChanges(deps.logger, 'reports', job.data, await evaluateReports(deps, job.data))
  })
  await boss.work<AccountJob>(EVALUATE_OPERATIONS_ALERTS, async ([job]) => {
    if (job !== undefined)
      logChanges(deps.logger, 'operations', job.data, await evaluateAccount(deps, job.data.accountId))
  })
}

/** One line per evaluation that changed something; unchanged conditions stay quiet. */
function logChanges(logger: Logger, family: string, job: object, applied: AppliedPlan) {
  if (applied.created + applied.updated + applied.resolved > 0)
    logger.info('alerts evaluated', {
      family,
      ...job,
      created: applied.created,
      updated: applied.updated,
      resolved: applied.resolved,
    })
}
