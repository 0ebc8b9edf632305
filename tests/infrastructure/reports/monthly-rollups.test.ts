import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { Period } from '../../../domain/reports/period.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { buildMonth, buildMonthlyRollups } from '../../../infrastructure/repositories/pg-monthly-rollups.ts'
import { pgReportReader } from '../../../infrastructure/repositories/pg-report-reader.ts'
import { builtMonths } from '../../../infrastructure/repositories/pg-summary-parts.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { aggregateRecord, streamOf } from '../../support/aggregate-records.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'
import { backend } from '../../support/test-db.ts'

// The monthly rollups of closed months (docs/ingestion.md "A year of history") change what the
// summaries read, never what they answer: the overview and a domain summary over periods cut
// anywhere across month boundaries are the same before the nightly build, after it, after a late
// report for a month already built (the month is marked stale and read from weeks and days), and
// after the month is built again. The "before" answers are the summaries reading weeks and days
// only, as they did before the monthly tables existed. Months of 2026 have ended by the database's
// clock, so every report here is "late" for the writer: it marks its month stale.

let t: TestApp
let accountId: string
const domains: { id: number; name: string }[] = []
const db = () => t.db.database.db
const DAY = 86_400

const PERIODS: Period[] = [
  { from: '2026-07-01', to: '2026-11-26' },
  { from: '2026-08-01', to: '2026-09-30' },
  { from: '2026-08-15', to: '2026-10-31' },
  { from: '2026-09-01', to: '2026-09-30' },
  { from: '2026-09-10', to: '2026-09-20' },
  { from: '2026-08-02', to: '2026-10-30' },
  { from: '2026-07-20', to: '2026-11-05' },
]

async function store(
  domain: { id: number; name: string },
  reportId: string,
  begin: string,
  options: { org: string; records: [string, number][]; end?: string },
) {
  const beginAt = Date.parse(`${begin}T00:00:00Z`) / 1000
  const endAt = options.end === undefined ? beginAt + DAY - 1 : Date.parse(`${options.end}T12:00:00Z`) / 1000
  const outcome = await createAggregateWriter(t.db.database).write({
    accountId,
    domainId: domain.id,
    messageId: null,
    metadata: reportMetadata(
      { reportId, begin: beginAt, domain: domain.name },
      { orgName: options.org, end: endAt },
    ),
    records: streamOf(
      options.records.map(([ip, count], i) =>
        aggregateRecord(ip, { count, disposition: i % 2 === 0 ? 'none' : 'reject', headerFrom: domain.name }),
      ),
    ),
    // Addresses ending in a multiple of 3 are aligned; the rest fail.
    evaluate: (r) => {
      const aligned = Number(r.sourceIp.split('.')[3]) % 3 === 0
      return { dkimAligned: aligned, spfAligned: false, dmarcPass: aligned }
    },
    contentHash: () => `${domain.id}-${reportId}`,
  })
  expect(outcome).toBeDefined()
}

/** Every scope (the account, each domain) over every period. */
async function answers() {
  const reader = pgReportReader(db())
  const out: unknown[] = []
  for (const period of PERIODS)
    for (const domainId of [null, ...domains.map((d) => d.id)])
      out.push({ period, domainId, summary: await reader.summary(accountId, domainId, period) })
  return out
}

/** The answers with no monthly row read (every build stale for the while), as before them. */
async function answersFromWeeksAndDays() {
  const fresh = rowsOf<{ month: string }>(
    await db().execute(sql`update monthly_rollup_builds set stale = true where account_id = ${accountId} and not stale
      returning to_char(month, 'YYYY-MM-DD') as month`),
  ).map((r) => r.month)
  try {
    return await answers()
  } finally {
    for (const month of fresh)
      await db().execute(
        sql`update monthly_rollup_builds set stale = false where account_id = ${accountId} and month = ${month}::date`,
      )
  }
}

const usable = () => builtMonths(db(), accountId, { from: '2026-07-01', to: '2026-11-26' })

beforeAll(async () => {
  t = await startTestApp()
  const owner = await t.account()
  accountId = owner.accountId
  for (const name of ['month-a.example', 'month-b.example']) {
    await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: name } })
    const id = rowsOf<{ id: string }>(
      await db().execute(sql`select id from domains where name = ${name}`),
    )[0]!.id
    domains.push({ id: Number(id), name })
  }
  const [a, b] = domains as [{ id: number; name: string }, { id: number; name: string }]
  const start = Date.parse('2026-07-20T00:00:00Z')
  for (let d = 0; d < 109; d++) {
    const day = new Date(start + d * DAY * 1000).toISOString().slice(0, 10)
    // Equal volumes from different sources and reporters, so ties are common.
    const records: [string, number][] = Array.from({ length: 5 }, (_, i) => [
      `192.0.2.${(d * 7 + i * 5) % 17}`,
      1 + ((d + i) % 4),
    ])
    await store(a, `a${d}`, day, { org: `reporter${d % 3}.example`, records })
    if (d % 3 === 0)
      await store(b, `b${d}`, day, { org: `reporter${d % 4}.example`, records: records.slice(0, 3) })
  }
  // A range across a month's end (counted from the month it begins in, and in a period that
  // begins within 31 days after it), one that ends before it begins, and one of zero records.
  await store(a, 'long', '2026-08-29', {
    org: 'weekly.example',
    records: [['198.51.100.7', 40]],
    end: '2026-09-02',
  })
  await store(b, 'backwards', '2026-09-10', {
    org: 'odd.example',
    records: [['198.51.100.8', 9]],
    end: '2026-08-20',
  })
  await store(b, 'empty', '2026-10-31', { org: 'empty.example', records: [] })
}, 120_000)
afterAll(() => t.close())

test('the summaries answer the same before and after the monthly build, and with a late report', async () => {
  // Every report here came after its month ended: nothing is usable before the build.
  expect(await usable()).toEqual([])
  const before = await answers()

  const build = await buildMonthlyRollups(db())
  expect(build.months).toBe(4) // July to October; November has not ended
  expect(await usable()).toEqual(['2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01'])
  expect(await answers()).toEqual(before)
  expect((await buildMonthlyRollups(db())).months).toBe(0)

  // A late report for a month already built: the month is stale until it is built again, and the
  // summaries say what weeks and days say.
  const [a] = domains as [{ id: number; name: string }]
  await store(a, 'late', '2026-09-14', {
    org: 'late.example',
    records: [
      ['203.0.113.1', 500],
      ['203.0.113.3', 700],
    ],
  })
  expect(await usable()).toEqual(['2026-07-01', '2026-08-01', '2026-10-01'])
  const late = await answers()
  expect(late).not.toEqual(before)
  expect(late).toEqual(await answersFromWeeksAndDays())
  const year = late[0] as {
    summary: { top_failing_sources: { source_ip: string }[]; reporters: { org_name: string }[] }
  }
  expect(year.summary.top_failing_sources[0]?.source_ip).toBe('203.0.113.1')
  expect(year.summary.reporters.map((r) => r.org_name)).toContain('late.example')

  expect((await buildMonthlyRollups(db())).months).toBe(1)
  expect(await usable()).toEqual(['2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01'])
  expect(await answers()).toEqual(late)
}, 120_000)

test('built months are read from the monthly rows', async () => {
  const period = { from: '2026-08-01', to: '2026-09-30' }
  const reader = pgReportReader(db())
  const built = await reader.summary(accountId, null, period)
  const rows = rowsOf<{ n: number }>(
    await db().execute(sql`update monthly_reporter_counts set reports = reports + 1000
      where account_id = ${accountId} and month = '2026-08-01' returning 1 as n`),
  ).length
  expect(rows).toBeGreaterThan(1)
  try {
    expect((await reader.summary(accountId, null, period)).totals.reports).toBe(
      built.totals.reports + 1000 * rows,
    )
  } finally {
    await db().execute(sql`update monthly_reporter_counts set reports = reports - 1000
      where account_id = ${accountId} and month = '2026-08-01'`)
  }
})

const staleOf = async (month: string) =>
  rowsOf<{ stale: boolean }>(
    await db().execute(
      sql`select stale from monthly_rollup_builds where account_id = ${accountId} and month = ${month}::date`,
    ),
  )[0]?.stale

/** Whether the promise is still pending after a while (it waits for a lock). */
async function waiting(promise: Promise<unknown>) {
  let done = false
  void promise.then(() => {
    done = true
  })
  await Bun.sleep(300)
  return !done
}

// Two connections at once: PostgreSQL only (PGlite has one).
test.if(backend === 'postgres')(
  'a late report stored while its month is being built leaves it stale',
  async () => {
    const database = t.db.database
    if (database.kind !== 'postgres') throw new Error('postgres only')
    expect(await staleOf('2026-08-01')).toBe(false)
    let write: Promise<unknown> = Promise.resolve()
    await database.client.begin(async (tx) => {
      // What the build does first (pg-monthly-rollups.ts), its transaction still open.
      await tx`insert into monthly_rollup_builds (account_id, month, built_at, stale)
      values (${accountId}, '2026-08-01', now(), false)
      on conflict (account_id, month) do update set built_at = now(), stale = false`
      const [a] = domains as [{ id: number; name: string }]
      write = store(a, 'during-build', '2026-08-12', { org: 'late.example', records: [['203.0.113.5', 900]] })
      expect(await waiting(write)).toBe(true)
    })
    await write
    expect(await staleOf('2026-08-01')).toBe(true)
    expect(await answers()).toEqual(await answersFromWeeksAndDays())
  },
)

test.if(backend === 'postgres')('a build waits for a late report being stored and includes it', async () => {
  const database = t.db.database
  if (database.kind !== 'postgres') throw new Error('postgres only')
  const [a] = domains as [{ id: number; name: string }]
  let build: Promise<unknown> = Promise.resolve()
  await database.client.begin(async (tx) => {
    // A writer's statement for an August report (aggregate-report-sql.ts), not yet committed.
    await tx`insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned,
        messages, reports)
      values (${accountId}, ${a.id}, '2026-08-20', '203.0.113.7', 'none', false, false, 5000, 1)`
    await tx`insert into monthly_rollup_builds (account_id, month, built_at, stale)
      values (${accountId}, '2026-08-01', null, true)
      on conflict (account_id, month) do update set stale = true where not monthly_rollup_builds.stale`
    build = buildMonth(db(), accountId, '2026-08-01')
    expect(await waiting(build)).toBe(true)
  })
  await build
  expect(await staleOf('2026-08-01')).toBe(false)
  const failing = rowsOf<{ failing: string }>(
    await db().execute(sql`select failing from monthly_failing_sources
      where account_id = ${accountId} and month = '2026-08-01' and source_ip = '203.0.113.7'`),
  )
  expect(failing.map((f) => Number(f.failing))).toEqual([5000])
})
