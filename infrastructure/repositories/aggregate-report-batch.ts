import type { PgBoss } from 'pg-boss'
import type { MessageMark, ReportBatchStore } from '../../domain/ingest/ports.ts'
import type { HeldReport } from '../../domain/ingest/report-batch.ts'
import { createRollupAccumulator, failingSources } from '../../domain/reports/report-rollup.ts'
import { type AggregateWriteResult, reportDay } from '../../domain/reports/store-aggregate.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import { withDamageMarked } from '../db/damaged-text.ts'
import type { Database } from '../db/database.ts'
import { triggerReportAlerts } from '../queue/alert-triggers.ts'
import { STORE_BATCH } from './aggregate-report-batch-sql.ts'
import { COUNT_BY_CONTENT, COUNT_BY_IDENTITY } from './aggregate-report-large.ts'
import { bind, recordValues } from './aggregate-report-sql.ts'
import { pgArray, type SqlTx, transactionOf } from './sql-tx.ts'

// A worker's batch of small reports (domain/ingest/report-batch.ts) in one transaction: one
// statement stores every report with its records and figures (aggregate-report-batch-sql.ts), one
// counts the duplicates (rare: one statement each), one marks the batch's messages processed.

type Column = string | number | boolean | null

/** The batch as STORE_BATCH's array parameters: reports, records, sources, failing IPs, selectors. */
export function batchValues(reports: HeldReport[]): Record<string, unknown> {
  const cols: Record<string, Column[]> = {}
  const push = (name: string, value: Column) => {
    const column = cols[name]
    if (column === undefined) cols[name] = [value]
    else column.push(value)
  }
  const recordOrd: number[] = []
  const records: HeldReport['records'] = []
  reports.forEach((report, index) => {
    const ord = index + 1
    const w = report.write
    const m = w.metadata
    const rollup = createRollupAccumulator()
    for (const [record, outcome] of report.records) {
      rollup.add(record, outcome)
      records.push([record, outcome])
      recordOrd.push(ord)
    }
    const t = rollup.totals()
    const report_: [string, Column][] = [
      ['ord', ord],
      ['account', w.accountId],
      ['domain', w.domainId],
      ['message', w.messageId],
      ['org', m.orgName],
      ['email', m.email],
      ['reportIdText', m.reportId],
      ['policyDomain', m.policy.domain],
      ['begin', m.begin],
      ['end', m.end],
      ['contentHash', report.contentHash],
      ['variant', m.variant],
      ['policy', JSON.stringify(m.policy)],
      ['errors', JSON.stringify(m.errors)],
      ['day', reportDay(m.begin)],
      ['records', t.records],
      ['totalMessages', t.messages],
      ['dmarcPass', t.dmarcPass],
      ['totalDkimAligned', t.dkimAligned],
      ['totalSpfAligned', t.spfAligned],
      ['none', t.dispositionNone],
      ['quarantine', t.dispositionQuarantine],
      ['reject', t.dispositionReject],
      ['other', t.dispositionOther],
    ]
    for (const [name, value] of report_) push(name, value)
    const sources = [...rollup.sources()]
    for (const s of sources) {
      push('sOrd', ord)
      push('ips', s.sourceIp)
      push('dispositions', s.disposition)
      push('dkimAligned', s.dkimAligned)
      push('spfAligned', s.spfAligned)
      push('messages', s.messages)
      push('spfPass', s.spfPass)
      push('dkimPass', s.dkimPass)
      push('forwarded', s.forwarded)
      push('dkimDomains', s.dkimDomains.join(' '))
      push('spfDomains', s.spfDomains.join(' '))
    }
    for (const f of failingSources(sources)) {
      push('fOrd', ord)
      push('failingIps', f.sourceIp)
      push('failingMessages', f.messages)
    }
    for (const s of rollup.selectors()) {
      push('selOrd', ord)
      push('selectors', s.selector)
      push('signingDomains', s.signingDomain)
      push('selectorMessages', s.messages)
    }
  })
  const values: Record<string, unknown> = { ...recordValues(records), rOrd: pgArray(recordOrd) }
  for (const name of STORE_BATCH.order) if (!(name in values)) values[name] = pgArray(cols[name] ?? [])
  return values
}

/** A duplicate is counted on the report stored first: by identity, else by content (as one by one). */
async function countDuplicate(tx: SqlTx, report: HeldReport): Promise<number> {
  const m = report.write.metadata
  const accountId = report.write.accountId
  const byIdentity = await tx.query<{ id: number }>(COUNT_BY_IDENTITY, [
    accountId,
    m.orgName,
    m.reportId,
    m.policy.domain,
    m.begin,
    m.end,
  ])
  if (byIdentity[0] !== undefined) return Number(byIdentity[0].id)
  const byContent = await tx.query<{ id: number }>(COUNT_BY_CONTENT, [accountId, report.contentHash])
  return Number(byContent[0]?.id ?? 0)
}

const MARK_PROCESSED = `update ingest_messages m
  set status = 'processed', outcome = v.outcome, processed_at = $3::timestamptz,
    quarantine_code = null, quarantine_reason = null
  from unnest($1::uuid[], $2::jsonb[]) as v(id, outcome)
  where m.id = v.id`

async function markProcessed(tx: SqlTx, marks: MessageMark[], now: Date) {
  if (marks.length === 0) return
  await tx.query(MARK_PROCESSED, [
    pgArray(marks.map((m) => m.id)),
    pgArray(marks.map((m) => JSON.stringify(withDamageMarked(m.outcome)))),
    now.toISOString(),
  ])
}

/** With the process's queue, each domain a batch stored reports for enqueues its report rules. */
export function pgReportBatchStore(
  database: Database,
  boss: PgBoss | null = null,
  logger?: Logger,
): ReportBatchStore {
  return {
    async commit(reports, marks, now) {
      const results = await transactionOf(database, async (tx) => {
        const results: AggregateWriteResult[] = []
        if (reports.length > 0) {
          const rows = await tx.query<{ ord: number; id: number; records: number; messages: number }>(
            STORE_BATCH.text,
            bind(STORE_BATCH, batchValues(reports)),
          )
          const stored = new Map(rows.map((row) => [Number(row.ord), row]))
          for (const [index, report] of reports.entries()) {
            const row = stored.get(index + 1)
            results.push(
              row === undefined
                ? { status: 'duplicate', reportId: await countDuplicate(tx, report) }
                : {
                    status: 'stored',
                    reportId: Number(row.id),
                    records: Number(row.records),
                    messages: Number(row.messages),
                  },
            )
          }
        }
        await markProcessed(tx, marks(results), now)
        return results
      })
      if (boss !== null) {
        // After the commit, as for one report (aggregate-report-writer.ts): debounced per domain, every
        // domain of the batch in the same two statements (alert-triggers.ts).
        const domains = new Map<string, { accountId: string; domainId: number }>()
        reports.forEach((report, i) => {
          if (results[i]?.status !== 'stored') return
          const { accountId, domainId } = report.write
          domains.set(`${accountId}:${domainId}`, { accountId, domainId })
        })
        await triggerReportAlerts(boss, [...domains.values()], logger)
      }
      return results
    },
  }
}
