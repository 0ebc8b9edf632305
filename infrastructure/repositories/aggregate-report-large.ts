import type { PgBoss } from 'pg-boss'
import type { ReportTotals, SelectorSeen } from '../../domain/reports/report-rollup.ts'
import type { AggregateWrite, AggregateWriteResult } from '../../domain/reports/store-aggregate.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { Database } from '../db/database.ts'
import { enqueueMerge, mergePendingRollups } from './aggregate-report-merge.ts'
import { bind, FINISH, INSERT_REPORT, metadataValues, totalValues } from './aggregate-report-sql.ts'
import { type SqlTx, statementOf, transactionOf } from './sql-tx.ts'

// A large report's transaction (aggregate-report-writer.ts streams its records): the report row
// first (figures zero until FINISH), then the records and the per-source rollup rows by COPY, then
// FINISH, the merge's safety net in the same transaction, and the merge right after the commit.

/** What a report is stored as, without its records. */
export type ReportHead = Pick<
  AggregateWrite,
  'accountId' | 'domainId' | 'messageId' | 'metadata' | 'contentHash'
>

/** The rollup figures a large report's records added up to (its sources went to rollup_pending). */
export interface LargeFigures {
  totals: ReportTotals
  selectors: SelectorSeen[]
}

export const COUNT_BY_IDENTITY = `update aggregate_reports set duplicates_seen = duplicates_seen + 1
  where account_id = $1 and lower(reporter_org) = lower($2) and report_id = $3 and policy_domain = $4
    and begin_at = to_timestamp($5) and end_at = to_timestamp($6) returning id`
export const COUNT_BY_CONTENT =
  'update aggregate_reports set duplicates_seen = duplicates_seen + 1 where account_id = $1 and content_hash = $2 returning id'

/** A duplicate is acknowledged and counted on the report stored first (by identity, else content). */
export async function countDuplicate(database: Database, input: ReportHead, contentHash: string | null) {
  const m = input.metadata
  const byIdentity = await statementOf<{ id: number }>(database, COUNT_BY_IDENTITY, [
    input.accountId,
    m.orgName,
    m.reportId,
    m.policy.domain,
    m.begin,
    m.end,
  ])
  if (byIdentity[0] !== undefined || contentHash === null) return Number(byIdentity[0]?.id ?? 0)
  const byContent = await statementOf<{ id: number }>(database, COUNT_BY_CONTENT, [
    input.accountId,
    contentHash,
  ])
  return Number(byContent[0]?.id ?? 0)
}

class DuplicateContent extends Error {}

async function insertReport(tx: SqlTx, input: ReportHead): Promise<number | null> {
  // The content hash is known only after the last record: a unique placeholder until FINISH.
  const values = { ...metadataValues(input), contentHash: `pending:${crypto.randomUUID()}` }
  const rows = await tx.query<{ id: number }>(INSERT_REPORT.text, bind(INSERT_REPORT, values))
  // bigint ids arrive as strings from postgres.js.
  return rows[0] === undefined ? null : Number(rows[0].id)
}

export interface LargeDeps {
  database: Database
  boss: PgBoss | null
  logger?: Logger | undefined
}

/**
 * Stores a large report: `body` writes its records and its rollup_pending rows in the transaction
 * and answers the figures. A duplicate by identity is found before `body` runs, one by content
 * at FINISH (the whole transaction rolls back); either is counted on the report stored first.
 */
export async function storeLarge(
  deps: LargeDeps,
  input: ReportHead,
  day: string,
  body: (tx: SqlTx, reportId: number) => Promise<LargeFigures>,
): Promise<AggregateWriteResult> {
  const { database, boss } = deps
  try {
    const result = await transactionOf(database, async (tx) => {
      const reportId = await insertReport(tx, input)
      if (reportId === null) return { status: 'duplicate' as const, reportId: 0 }
      const { totals, selectors } = await body(tx, reportId)
      const values = { ...metadataValues(input), ...totalValues(totals, selectors) }
      try {
        await tx.query(
          FINISH.text,
          bind(FINISH, { ...values, day, reportId, contentHash: input.contentHash() }),
        )
      } catch (error) {
        // The same decompressed content was stored before: a duplicate (rolled back below).
        if ((error as { code?: string }).code === '23505') throw new DuplicateContent()
        throw error
      }
      if (boss !== null)
        await enqueueMerge(boss, tx, { reportId, accountId: input.accountId, domainId: input.domainId })
      return { status: 'stored' as const, reportId, records: totals.records, messages: totals.messages }
    })
    if (result.status === 'stored') await mergeAfterCommit(deps, result.reportId)
    return result.status === 'duplicate'
      ? { status: 'duplicate', reportId: await countDuplicate(database, input, null) }
      : result
  } catch (error) {
    if (!(error instanceof DuplicateContent)) throw error
    return { status: 'duplicate', reportId: await countDuplicate(database, input, input.contentHash()) }
  }
}

/**
 * The merge right after a large report's commit. Its failure does not fail the report, stored
 * already (a retried message would only count itself a duplicate): with a queue the safety net
 * sent in the report's transaction merges the rows within minutes, and the failure is logged;
 * without one (tests, tools) it is thrown.
 */
async function mergeAfterCommit({ database, boss, logger }: LargeDeps, reportId: number) {
  try {
    await mergePendingRollups(database, reportId)
  } catch (error) {
    if (boss === null) throw error
    logger?.warn('rollup merge left to its job', { reportId, error: String(error) })
  }
}
