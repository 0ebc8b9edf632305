import type { PgBoss, Db as QueueDb } from 'pg-boss'
import {
  type DomainJob,
  EVALUATE_OPERATIONS_ALERTS,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  type QueueSpec,
  send,
} from './catalogue.ts'

// The stores that write the facts alerts are made of enqueue their evaluation at once
// (docs/alerts.md, "Storage, jobs and API"); the schedulers in src/jobs/alerts.ts stay as the
// safety net. Every job carries the key the schedulers use, so the queues' `stately` policy
// coalesces a trigger with a scheduled job of the same domain or account: at most one waits.

/** The key of a domain's evaluation jobs, the same the schedulers use (src/jobs/alerts.ts). */
export const domainJobKey = (ref: DomainJob) => `${ref.accountId}:${ref.domainId}`

/**
 * The report rules run at most once per domain per 300-second slot of the clock. pg-boss's
 * debounce (`singletonSeconds` with `singletonNextSlot`) keys a job to its slot: the first report
 * of a slot is evaluated at once; a report that finds a job of its key not yet started needs none
 * (stately: that job reads it when it runs); a report arriving after the slot's job started queues
 * one job for the start of the next slot, which every later report of the slot shares. So a burst
 * costs at most one evaluation per slot (two may fall seconds apart across a slot boundary), and
 * the last report of a burst is evaluated within 5 minutes.
 */
export const REPORT_ALERT_DEBOUNCE_SECONDS = 300

const debounced = (key: string) => ({
  singletonKey: key,
  singletonSeconds: REPORT_ALERT_DEBOUNCE_SECONDS,
  singletonNextSlot: true,
})

/**
 * A stored posture check: its domain's posture and change rules, in the transaction that stores
 * the check (`db`), so the job exists exactly when the check does. Not debounced: one queued
 * evaluation per domain absorbs a burst of checks (stately), and it reads the latest check when it runs.
 */
export function enqueuePostureAlerts(boss: PgBoss, db: QueueDb, ref: DomainJob) {
  return send(boss, EVALUATE_POSTURE_ALERTS, ref, { db, singletonKey: domainJobKey(ref) })
}

/** A stored aggregate report: its domain's report rules, debounced. */
export function enqueueReportAlerts(boss: PgBoss, ref: DomainJob) {
  return send(boss, EVALUATE_REPORT_ALERTS, ref, debounced(domainJobKey(ref)))
}

/**
 * A stored failure report: `failure_report_received` is an operations rule, evaluated per account
 * (src/jobs/alert-evaluation.ts, evaluateAccount), so its account's job, debounced the same way.
 */
export function enqueueOperationsAlerts(boss: PgBoss, accountId: string) {
  return send(boss, EVALUATE_OPERATIONS_ALERTS, { accountId }, debounced(accountId))
}

/**
 * An evaluation wanted now (the demo, once its reports are digested). A stately queue holds one
 * waiting job per key, and the waiting one may be a debounced job due at the next slot: it is
 * cancelled (which also frees its slot for the next report) and this one sent in its place.
 */
export async function evaluateNow<Payload extends object>(
  boss: PgBoss,
  spec: QueueSpec<Payload>,
  data: Payload,
  singletonKey: string,
  db?: QueueDb,
): Promise<string | null> {
  const on = db === undefined ? {} : { db }
  const id = await send(boss, spec, data, { singletonKey, ...on })
  if (id !== null) return id
  for (const job of await boss.findJobs(spec.name, { key: singletonKey, queued: true, ...on }))
    await boss.cancel(spec.name, job.id, on)
  return send(boss, spec, data, { singletonKey, ...on })
}
