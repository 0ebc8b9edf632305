import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import type { AggregateWrite } from '../../../domain/reports/store-aggregate.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { MERGE_ROLLUPS } from '../../../infrastructure/queue/catalogue.ts'
import {
  PENDING_COLUMNS,
  pendingFormat,
} from '../../../infrastructure/repositories/aggregate-pending-line.ts'
import {
  MERGE_SAFETY_NET_SECONDS,
  mergePendingRollups,
} from '../../../infrastructure/repositories/aggregate-report-merge.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { transactionOf } from '../../../infrastructure/repositories/sql-tx.ts'
import { ingestJobDeps } from '../../../src/compose/ingest.ts'
import { housekeeping } from '../../../src/compose/maintenance.ts'
import { ingestJobs } from '../../../src/jobs/ingest.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { aggregateRecord, streamOf } from '../../support/aggregate-records.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// A large report's per-source rollup goes to rollup_pending in its transaction and is merged into
// daily_rollups and weekly_failing_sources right after its commit (aggregate-report-merge.ts), with
// a job sent in the same transaction as the safety net. The merge moves each row exactly once.

let t: TestApp
let accountId: string
let domainId: number

beforeAll(async () => {
  t = await startTestApp({}, { queue: true })
  const owner = await t.account()
  accountId = owner.accountId
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'example.com' } })
  const rows = rowsOf<{ id: number }>(
    await t.db.database.db.execute(sql`select id from domains where name = 'example.com'`),
  )
  domainId = Number(rows[0]!.id)
}, 60_000)
afterAll(() => t.close())

const record = (ip: string, count: number, pass: boolean): AggregateRecord =>
  aggregateRecord(ip, {
    count,
    dkimEvaluated: pass ? 'pass' : 'fail',
    spfEvaluated: 'fail',
    envelopeFrom: 'bounce.example.com',
    dkim: [{ domain: 'example.com', selector: 's1', result: pass ? 'pass' : 'fail', humanResult: null }],
    spf: [{ domain: 'bounce.example.com', scope: 'mfrom', result: 'fail' }],
  })

const write = (reportId: string, records: AggregateRecord[], begin: number): AggregateWrite => ({
  accountId,
  domainId,
  messageId: null,
  metadata: reportMetadata({ reportId, begin, domain: 'example.com' }),
  records: streamOf(records),
  evaluate: (r) => ({
    dkimAligned: r.dkimEvaluated === 'pass',
    spfAligned: false,
    dmarcPass: r.dkimEvaluated === 'pass',
  }),
  contentHash: () => `hash-${reportId}`,
})

/** 900 records over 500 sources, every third failing. */
const large = (prefix: string) =>
  Array.from({ length: 900 }, (_, i) =>
    record(`${prefix}.${Math.floor(i / 2) % 250}.${i % 2}`, 2, i % 3 !== 0),
  )

const dayOf = (begin: number) => new Date(begin * 1000).toISOString().slice(0, 10)

async function figures(day: string) {
  return rowsOf<{ rollup: number; rows: number; failing: number; weekly: number; pending: number }>(
    await t.db.database.db.execute(sql`select
      (select coalesce(sum(messages), 0)::int from daily_rollups where domain_id = ${domainId} and day = ${day}) as rollup,
      (select count(*)::int from daily_rollups where domain_id = ${domainId} and day = ${day}) as rows,
      (select coalesce(sum(messages), 0)::int from daily_rollups where domain_id = ${domainId} and day = ${day}
        and not dkim_aligned and not spf_aligned) as failing,
      (select coalesce(sum(failing), 0)::int from weekly_failing_sources where domain_id = ${domainId}
        and week = date_trunc('week', ${day}::date)::date) as weekly,
      (select count(*)::int from rollup_pending) as pending`),
  )[0]!
}

test('a large report is merged before its write returns, and its safety net was sent in its transaction', async () => {
  const writer = createAggregateWriter(t.db.database, { boss: t.runtime.boss })
  const begin = 1_700_600_000
  const records = large('198.51')
  const result = await writer.write(write('merge-1', records, begin))
  if (result.status !== 'stored') throw new Error(result.status)
  const failing = records.filter((r) => r.dkimEvaluated !== 'pass').length * 2
  const keys = new Set(records.map((r) => `${r.sourceIp} ${r.dkimEvaluated}`))
  expect(await figures(dayOf(begin))).toEqual({
    rollup: 1800,
    rows: keys.size,
    failing,
    weekly: failing,
    pending: 0,
  })
  const jobs = await t.runtime.boss!.findJobs(MERGE_ROLLUPS.name)
  expect(jobs.map((j) => j.data)).toEqual([{ reportId: result.reportId, accountId, domainId }])
  // Due a minute after the transaction's end (created_on is its start).
  const delay = (jobs[0]!.startAfter.getTime() - jobs[0]!.createdOn.getTime()) / 1000
  expect(delay).toBeGreaterThanOrEqual(MERGE_SAFETY_NET_SECONDS - 1)
  expect(delay).toBeLessThan(MERGE_SAFETY_NET_SECONDS + 30)
  // The safety net finds nothing left: the rollups do not move.
  const deps = ingestJobDeps(t.runtime, { messages: null as never, forensicTls: null as never })
  expect(await deps.mergeRollups({ reportId: result.reportId, accountId, domainId })).toBe(0)
  expect((await figures(dayOf(begin))).rollup).toBe(1800)
})

/** Rows left pending as after a commit whose merge did not run (the process stopped in between). */
async function leavePending(reportId: number, sources: { ip: string; messages: number; failing: boolean }[]) {
  const format = pendingFormat(reportId, accountId)
  await transactionOf(t.db.database, async (tx) => {
    for (const s of sources) {
      const values = format.values({
        sourceIp: s.ip,
        disposition: 'none',
        dkimAligned: !s.failing,
        spfAligned: false,
        messages: s.messages,
        spfPass: 0,
        dkimPass: s.failing ? 0 : s.messages,
        forwarded: 0,
        dkimDomains: ['example.com'],
        spfDomains: [],
      })
      await tx.query(
        `insert into rollup_pending (${PENDING_COLUMNS.join(', ')}) values (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
        values,
      )
    }
  })
}

async function storedReport(reportId: string, begin: number): Promise<number> {
  const writer = createAggregateWriter(t.db.database)
  const result = await writer.write(write(reportId, [record('192.0.2.1', 1, true)], begin))
  if (result.status !== 'stored') throw new Error(result.status)
  return result.reportId
}

test('rows left pending are merged once by the job, which evaluates the domain again', async () => {
  const begin = 1_700_800_000
  const reportId = await storedReport('left-1', begin)
  const before = await figures(dayOf(begin))
  await leavePending(reportId, [
    { ip: '203.0.113.7', messages: 5, failing: true },
    { ip: '203.0.113.8', messages: 3, failing: false },
  ])
  const [merge] = ingestJobs(
    ingestJobDeps(t.runtime, { messages: null as never, forensicTls: null as never }),
  ).filter((h) => h.queue.name === MERGE_ROLLUPS.name)
  const job = { id: 'j', name: MERGE_ROLLUPS.name, data: { reportId, accountId, domainId } }
  await merge!.handler([job as never])
  expect(await figures(dayOf(begin))).toEqual({
    rollup: before.rollup + 8,
    rows: before.rows + 2,
    failing: before.failing + 5,
    weekly: before.weekly + 5,
    pending: 0,
  })
  expect(
    await t.runtime.boss!.findJobs('alerts.evaluate-reports', { data: { accountId, domainId } }),
  ).not.toEqual([])
  // Again: nothing left, nothing added.
  await merge!.handler([job as never])
  expect((await figures(dayOf(begin))).rollup).toBe(before.rollup + 8)
})

test('a report removed before its merge takes its pending rows along and adds nothing', async () => {
  const begin = 1_700_900_000
  const reportId = await storedReport('gone-1', begin)
  await leavePending(reportId, [{ ip: '203.0.113.9', messages: 4, failing: true }])
  const before = await figures(dayOf(begin))
  await t.db.database.db.execute(sql`delete from aggregate_reports where id = ${reportId}`)
  expect(await mergePendingRollups(t.db.database, reportId)).toBe(0)
  expect(await figures(dayOf(begin))).toEqual({ ...before, pending: 0 })
})

test('a merge into a month that has ended marks its monthly rollups stale again', async () => {
  // A report of last year: its month was built by the nightly job between the commit and the merge.
  const begin = Math.floor(Date.UTC(new Date().getUTCFullYear() - 1, 2, 10) / 1000)
  const reportId = await storedReport('late-1', begin)
  const month = `${dayOf(begin).slice(0, 7)}-01`
  await t.db.database.db.execute(
    sql`update monthly_rollup_builds set stale = false, built_at = now() where account_id = ${accountId} and month = ${month}::date`,
  )
  await leavePending(reportId, [{ ip: '203.0.113.10', messages: 2, failing: true }])
  expect(await mergePendingRollups(t.db.database, reportId)).toBe(1)
  const builds = rowsOf<{ stale: boolean }>(
    await t.db.database.db.execute(
      sql`select stale from monthly_rollup_builds where account_id = ${accountId} and month = ${month}::date`,
    ),
  )
  expect(builds).toEqual([{ stale: true }])
})

test('the nightly monthly build merges first whatever its merge and job both left pending', async () => {
  const begin = 1_701_000_000
  const first = await storedReport('night-1', begin)
  const second = await storedReport('night-2', begin + 3600)
  const before = await figures(dayOf(begin))
  await leavePending(first, [{ ip: '203.0.113.11', messages: 6, failing: true }])
  await leavePending(second, [{ ip: '203.0.113.11', messages: 1, failing: true }])
  await housekeeping(t.db.database).buildMonthlyRollups()
  expect(await figures(dayOf(begin))).toEqual({
    rollup: before.rollup + 7,
    rows: before.rows + 1,
    failing: before.failing + 7,
    weekly: before.weekly + 7,
    pending: 0,
  })
})

test('a report whose rows cannot be merged stops neither the others nor the build; the run fails after it', async () => {
  const begin = 1_701_200_000
  const good = await storedReport('night-good', begin)
  const bad = await storedReport('night-bad', begin + 60)
  const before = await figures(dayOf(begin))
  await leavePending(good, [{ ip: '203.0.113.12', messages: 3, failing: true }])
  // 192.0.2.1 (storedReport's one record) is in the rollup already: adding the largest bigint to it
  // overflows, as any refused statement would.
  await leavePending(bad, [{ ip: '192.0.2.1', messages: Number.MAX_SAFE_INTEGER, failing: false }])
  await t.db.database.db.execute(
    sql`update rollup_pending set messages = 9223372036854775807 where report_id = ${bad}`,
  )
  await expect(housekeeping(t.db.database).buildMonthlyRollups()).rejects.toThrow(
    `pending rollups of 1 report(s) could not be merged (report ${bad}:`,
  )
  const after = await figures(dayOf(begin))
  expect(after.rollup).toBe(before.rollup + 3)
  const left = rowsOf<{ report: number }>(
    await t.db.database.db.execute(sql`select distinct report_id::int as report from rollup_pending`),
  )
  expect(left).toEqual([{ report: bad }])
  // The build ran: the closed months of the account's reports are built.
  const built = rowsOf<{ n: number }>(
    await t.db.database.db.execute(
      sql`select count(*)::int as n from monthly_rollup_builds where account_id = ${accountId} and built_at is not null`,
    ),
  )
  expect(built[0]!.n).toBeGreaterThan(0)
  await t.db.database.db.execute(sql`delete from rollup_pending where report_id = ${bad}`)
})
