import type { PgBoss, Db as QueueDb } from 'pg-boss'
import type { Database } from '../db/database.ts'
import { MERGE_ROLLUPS, type MergeJob, send } from '../queue/catalogue.ts'
import { bind, compile, lateInsert, rollupsCte, weeklyCte } from './aggregate-report-sql.ts'
import { type SqlTx, statementOf } from './sql-tx.ts'

// A large report's per-source rollup, merged after its commit (docs/ingestion.md, "The per-source
// rollup merged after the commit"). Writing ~100,000 daily_rollups rows is most of a large
// report's finishing statement (~1 s of PostgreSQL's index upkeep): the report's transaction
// copies its sources into rollup_pending instead (cheap: no index), so its totals, records and
// selectors are visible at its commit, and this statement moves them into daily_rollups and
// weekly_failing_sources right after, in one statement of its own. A job enqueued in the report's
// transaction does the same later if the process stops in between or the merge fails, so the
// rows are merged exactly once: the statement deletes what it merges.

// The report's rows leave rollup_pending whatever happens; they reach the rollups only while the
// report exists (a domain removed in between took its report along). The account, domain and day
// are the report's own (reportDay: the UTC date of its begin), and the month is marked stale again
// here in case the nightly build ran between the commit and the merge.
const KEPT = `kept as (
  select m.*, r.account_id as account, r.domain_id as domain, (r.begin_at at time zone 'UTC')::date as day
  from moved m join aggregate_reports r on r.id = @reportId and r.account_id = m.account_id
)`
const KEPT_OWNER = { account: 'u.account', domain: 'u.domain', day: 'u.day' }
export const MERGE = compile(`with moved as (
  delete from rollup_pending where report_id = @reportId
  returning account_id, source_ip as ip, disposition, dkim_aligned as dkim, spf_aligned as spf, messages, spf_pass,
    dkim_pass, forwarded, dkim_domains, spf_domains
), ${KEPT}, ${rollupsCte('from', 'kept u', KEPT_OWNER)},
${weeklyCte(
  'from',
  `(select account, domain, day, ip, sum(messages) as messages from kept where not dkim and not spf
    group by account, domain, day, ip) u`,
  KEPT_OWNER,
)}, late as (
  ${lateInsert('from (select account, day from kept limit 1) u', KEPT_OWNER)}
)
select count(*)::int as merged from kept`)

/** Merges a report's pending rollup rows; 0 when there were none (merged already). */
export async function mergePendingRollups(database: Database, reportId: number): Promise<number> {
  const rows = await statementOf<{ merged: number }>(database, MERGE.text, bind(MERGE, { reportId }))
  return rows[0]?.merged ?? 0
}

/**
 * Every report's rows still pending, one report at a time (the nightly monthly build calls this
 * first). Only committed rows are seen, so a report being stored is never merged early; a report
 * merged meanwhile by its writer or its job is found empty (the delete waits for theirs). A report
 * whose merge fails does not stop the others: its error is returned with it.
 */
export async function mergeLeftoverRollups(
  database: Database,
): Promise<{ merged: number; failed: { reportId: number; error: unknown }[] }> {
  const reports = await statementOf<{ id: number }>(
    database,
    'select distinct report_id as id from rollup_pending order by 1',
    [],
  )
  let merged = 0
  const failed: { reportId: number; error: unknown }[] = []
  for (const { id } of reports) {
    try {
      merged += await mergePendingRollups(database, Number(id))
    } catch (error) {
      failed.push({ reportId: Number(id), error })
    }
  }
  return { merged, failed }
}

/** A raw transaction as pg-boss's executor, so a job is sent in the transaction of its rows. */
export function queueDbOf(tx: SqlTx): QueueDb {
  return { executeSql: async (text, values) => ({ rows: await tx.query(text, values) }) }
}

/**
 * The merge's safety net, sent in the report's transaction at its end: due a minute after that
 * (a time, not a delay, which pg-boss would count from the transaction's start), by which time
 * the writer has normally merged the rows itself and the job finds none.
 */
export function enqueueMerge(boss: PgBoss, tx: SqlTx, job: MergeJob) {
  const startAfter = new Date(Date.now() + MERGE_SAFETY_NET_SECONDS * 1000)
  return send(boss, MERGE_ROLLUPS, job, { db: queueDbOf(tx), startAfter })
}

export const MERGE_SAFETY_NET_SECONDS = 60
