import type { PgBoss } from 'pg-boss'
import {
  alertWork,
  type EvaluationDeps,
  evaluateAccount,
  evaluatePosture,
  evaluateReports,
  reportRulesDay,
} from '../../domain/alerts/evaluation.ts'
import type { AppliedPlan } from '../../domain/alerts/ports.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import {
  type DomainJob,
  EVALUATE_OPERATIONS_ALERTS,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  SCHEDULE_OPERATIONS_ALERTS,
  SCHEDULE_POSTURE_ALERTS,
  SCHEDULE_REPORT_ALERTS,
  send,
} from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'
import { type ChildRun, childRunFields } from '../../infrastructure/runtime/report-process.ts'

// Alert evaluation jobs (issue #6, docs/alerts.md "Storage, jobs and API"). Three cron schedulers
// (run once across all workers by pg-boss) enqueue one job per domain or account; those jobs are
// what several workers share. Their queues are `stately` per key: a domain already waiting for an
// evaluation is not queued twice. A handler that throws is retried (database unavailable, DNS
// failure reading the SPF tree); a domain deleted meanwhile is simply skipped.
//
// Posture checks are stored by the posture jobs and by the API (GET /domains/{name}/status), so
// rather than a hook in one of them, a scheduler finds every domain checked in the last hour; the
// evaluation is idempotent (domain/alerts/evaluation.ts), so looking back further than the
// 15-minute interval costs little and lets a late run catch up.

export interface AlertJobDeps extends EvaluationDeps {
  logger: Logger
  /**
   * A domain whose day has at least `minSources` sources has its report rules evaluated by a report
   * process of its own, which answers with the applied plan (ROLE=all on PostgreSQL:
   * src/compose/report-processes.ts; docs/alerts.md, "How the report rules read their facts").
   */
  ownProcess?: { minSources: number; run: (ref: DomainJob) => Promise<ChildRun> }
}

const domainKey = (ref: DomainJob) => `${ref.accountId}:${ref.domainId}`

export function alertJobs(boss: PgBoss, deps: AlertJobDeps): JobHandler[] {
  const work = alertWork(deps)
  return [
    handle(SCHEDULE_POSTURE_ALERTS, async () => {
      for (const ref of await work.postureDue())
        await send(boss, EVALUATE_POSTURE_ALERTS, ref, { singletonKey: domainKey(ref) })
    }),
    handle(SCHEDULE_REPORT_ALERTS, async () => {
      for (const ref of await work.reportsDue())
        await send(boss, EVALUATE_REPORT_ALERTS, ref, { singletonKey: domainKey(ref) })
    }),
    handle(SCHEDULE_OPERATIONS_ALERTS, async () => {
      for (const accountId of await work.accountsDue())
        await send(boss, EVALUATE_OPERATIONS_ALERTS, { accountId }, { singletonKey: accountId })
    }),
    handle(EVALUATE_POSTURE_ALERTS, async ([job]) => {
      if (job !== undefined)
        logChanges(deps.logger, 'posture', job.data, await evaluatePosture(deps, job.data))
    }),
    handle(EVALUATE_REPORT_ALERTS, async ([job]) => {
      if (job !== undefined) logChanges(deps.logger, 'reports', job.data, await reportRules(deps, job.data))
    }),
    handle(EVALUATE_OPERATIONS_ALERTS, async ([job]) => {
      if (job !== undefined)
        logChanges(deps.logger, 'operations', job.data, await evaluateAccount(deps, job.data.accountId))
    }),
  ]
}

/**
 * The report rules of a domain, here or, for a day of many sources, in a report process: they read
 * every source of the day (100,000 after a large report: ~1 s of this thread's CPU and ~2 s of the
 * database's), work that would compete with the API in ROLE=all.
 */
async function reportRules(deps: AlertJobDeps, ref: DomainJob): Promise<AppliedPlan> {
  if (deps.ownProcess === undefined) return evaluateReports(deps, ref)
  const { sources } = await deps.reportSources.dayVolume(ref, reportRulesDay(deps.now()))
  if (sources < deps.ownProcess.minSources) return evaluateReports(deps, ref)
  const run = await deps.ownProcess.run(ref)
  deps.logger.info('report rules evaluated by a report process', { ...ref, sources, ...childRunFields(run) })
  return run.result as AppliedPlan
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
