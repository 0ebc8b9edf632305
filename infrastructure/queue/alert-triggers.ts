import type { PgBoss, Db as QueueDb } from 'pg-boss'
import { errorFields, type Logger } from '../../domain/shared/logger.ts'
import {
  type DomainJob,
  EVALUATE_OPERATIONS_ALERTS,
  EVALUATE_POSTURE_ALERTS,
  EVALUATE_REPORT_ALERTS,
  insert,
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

/**
 * A debounced job (pg-boss's `singletonNextSlot`) for each of several keys, in two statements
 * whatever their number, instead of up to two per key: a batch of small reports stores reports of
 * many domains (docs/ingestion.md, "The queue: small reports in batches"). The same two inserts
 * pg-boss's `send` makes one job at a time (its manager's createJob): first in the current slot
 * (`singletonSeconds`), which a job of the key waiting unstarted refuses (stately); the keys refused
 * are then inserted in the next slot (`singletonOffset` of one slot, due at its start), which a
 * job waiting there refuses too. Answers the id of each key's new job, null where none was needed.
 */
export async function sendDebounced<Payload extends object>(
  boss: PgBoss,
  spec: QueueSpec<Payload>,
  items: readonly { key: string; data: Payload }[],
  now: () => number = Date.now,
): Promise<(string | null)[]> {
  if (items.length === 0) return []
  const seconds = REPORT_ALERT_DEBOUNCE_SECONDS
  // In key order: two batches inserting the same keys (two workers, or a process's two fetch
  // loops) then take their rows' locks in the same order. In arrival order they could wait on each
  // other's uncommitted rows and deadlock, which one key per statement never did.
  const order = items.map((_, i) => i).sort((a, b) => compareKeys(items[a]!.key, items[b]!.key))
  const sorted = order.map((i) => items[i]!)
  const slot = (offset: number) =>
    sorted.map(({ key, data }) => ({
      id: crypto.randomUUID(),
      data,
      singletonKey: key,
      singletonSeconds: seconds,
      // `singletonOffset` is not in pg-boss's JobInsert type; its insert statement takes it (plans.js
      // insertJobs), and send sets it so for the next slot. tests/api/alert-triggers.test.ts checks
      // the slot and the start.
      singletonOffset: offset,
    }))
  const current = slot(0)
  const created = new Set(await insert(boss, spec, current, { returnId: true }))
  const ids = current.map((job) => (created.has(job.id) ? job.id : null))
  const refused = ids.flatMap((id, i) => (id === null ? [i] : []))
  if (refused.length > 0) {
    // As pg-boss's getDebounceStartAfter: due at the next slot's start (the seconds left, plus
    // one), read after the first statement (which may have waited on locks). pg-boss corrects the
    // process's clock by its measured offset from the database's; this does not, so a clock that is
    // off by some seconds moves this start by as much (a second evaluation in one slot at worst).
    const at = now()
    const startAfter = seconds - Math.floor((at % (seconds * 1000)) / 1000) + 1
    const next = slot(seconds)
    const retried = refused.map((i) => ({ ...next[i]!, startAfter }))
    const createdNext = new Set(await insert(boss, spec, retried, { returnId: true }))
    for (const [k, i] of refused.entries()) if (createdNext.has(retried[k]!.id)) ids[i] = retried[k]!.id
  }
  // Back in the callers' order.
  const answers: (string | null)[] = new Array(items.length).fill(null)
  order.forEach((i, k) => {
    answers[i] = ids[k]!
  })
  return answers
}

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * A stored posture check: its domain's posture and change rules, in the transaction that stores
 * the check (`db`), so the job exists exactly when the check does. Not debounced: one queued
 * evaluation per domain absorbs a burst of checks (stately), and it reads the latest check when it runs.
 */
export function enqueuePostureAlerts(boss: PgBoss, db: QueueDb, ref: DomainJob) {
  return send(boss, EVALUATE_POSTURE_ALERTS, ref, { db, singletonKey: domainJobKey(ref) })
}

/** Stored aggregate reports: the report rules of each of their domains, debounced. */
export function enqueueReportAlerts(boss: PgBoss, refs: readonly DomainJob[]) {
  return sendDebounced(
    boss,
    EVALUATE_REPORT_ALERTS,
    refs.map((ref) => ({ key: domainJobKey(ref), data: ref })),
  )
}

/**
 * Stored reports' triggers, after their commit. A trigger lost here loses no report: the hourly
 * scheduler evaluates every domain with new reports (src/jobs/alerts.ts), so with a logger the
 * failure is logged and the stored reports stand. Thrown, it would fail the job that stored them,
 * and its retry would count each of its own reports a duplicate. Without a logger it is thrown.
 */
export async function triggerReportAlerts(
  boss: PgBoss,
  refs: readonly DomainJob[],
  logger: Logger | undefined,
): Promise<void> {
  try {
    await enqueueReportAlerts(boss, refs)
  } catch (error) {
    if (logger === undefined) throw error
    logger.warn('report alert triggers not sent; the hourly scheduler evaluates these domains', {
      domains: refs.length,
      ...errorFields(error),
    })
  }
}

/**
 * A stored failure report: `failure_report_received` is an operations rule, evaluated per account
 * (src/jobs/alert-evaluation.ts, evaluateAccount), so its account's job, debounced the same way.
 */
export async function enqueueOperationsAlerts(boss: PgBoss, accountId: string) {
  const [id] = await sendDebounced(boss, EVALUATE_OPERATIONS_ALERTS, [
    { key: accountId, data: { accountId } },
  ])
  return id ?? null
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
