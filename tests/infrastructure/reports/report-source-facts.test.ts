import { afterAll, beforeAll, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import {
  type EvaluationDeps,
  evaluateReports,
  REPORT_SOURCE_PAGE,
} from '../../../domain/alerts/evaluation.ts'
import { reportAlerts } from '../../../domain/alerts/rules/reports.ts'
import { classifyStats } from '../../../domain/sources/list-sources.ts'
import { resolveSpfTree } from '../../../domain/spf/include-tree.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { alerts } from '../../../infrastructure/db/schema/alerts.ts'
import { domains } from '../../../infrastructure/db/schema/domains.ts'
import { alertEvaluationDeps } from '../../../src/compose/alerts.ts'
import { stores } from '../../../src/compose/stores.ts'
import { memoryDns } from '../../support/memory-dns.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The report rules' facts for a domain-day of 20,000 sources, on PostgreSQL and PGlite: the pages
// stay bounded, the sources no rule can count are left out in SQL, and the alerts are the ones the
// rules raise over every source loaded at once (the evaluation before docs/alerts.md "How the
// report rules read their facts").

let tdb: TestDatabase
let deps: EvaluationDeps
let ref: { accountId: string; domainId: number }
const DAY = '2026-05-09'
const now = new Date('2026-05-10T09:00:00Z')
const dns = memoryDns({})
const PASSING = 18_500
const SPOOFING = 1_500
const pages: number[] = []

beforeAll(async () => {
  tdb = await createTestDatabase()
  const db = tdb.database.db
  const s = stores(tdb.database)
  const base = alertEvaluationDeps(s, { now: () => now, dns })
  deps = {
    ...base,
    reportSources: {
      dayVolume: base.reportSources.dayVolume,
      sourcePage: async (...args) => {
        const page = await base.reportSources.sourcePage(...args)
        pages.push(page.length)
        return page
      },
    },
  }
  const [a] = await db.insert(accounts).values({ ingestKey: 'many-sources' }).returning({ id: accounts.id })
  const [d] = await db
    .insert(domains)
    .values({ accountId: a!.id, name: 'many.example', verificationToken: 't', verifiedAt: now })
    .returning({ id: domains.id })
  ref = { accountId: a!.id, domainId: d!.id }
  const ip = sql.raw(`('10.' || (g / 65536) || '.' || ((g / 256) % 256) || '.' || (g % 256))::inet`)
  // Small senders passing DMARC (never counted), spoofing hosts (1 message each, failing) and one
  // large unknown sender that passes (a new unknown source on its own).
  await db.execute(sql`insert into daily_rollups
      (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, reports)
    select ${ref.accountId}, ${ref.domainId}, ${DAY}::date, ${ip}, 'none', true, true, 5, 1
    from generate_series(1, ${PASSING}::int) g`)
  await db.execute(sql`insert into daily_rollups
      (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, reports)
    select ${ref.accountId}, ${ref.domainId}, ${DAY}::date, ${ip}, 'quarantine', false, false, 1, 1
    from generate_series(${PASSING + 1}::int, ${PASSING + SPOOFING}::int) g`)
  await db.execute(sql`insert into daily_rollups
      (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, reports)
    values (${ref.accountId}, ${ref.domainId}, ${DAY}::date, '192.0.2.1', 'none', false, true, 5000, 1)`)
  // An owner's verdict on a small passing sender: read (a verdict changes its status), no alert.
  await db.execute(sql`insert into source_overrides (domain_id, source_ip, status, updated_at)
    values (${ref.domainId}, '10.0.0.7', 'unknown', now())`)
}, 120_000)
afterAll(() => tdb.drop())

test('20,000 sources: bounded pages, only the countable ones read, the same alerts', async () => {
  expect(await deps.reportSources.dayVolume(ref, DAY)).toEqual({
    messages: PASSING * 5 + SPOOFING + 5000,
    sources: PASSING + SPOOFING + 1,
  })
  const applied = await evaluateReports(deps, ref)
  expect(applied.created).toBe(2)
  expect(Math.max(...pages)).toBeLessThanOrEqual(REPORT_SOURCE_PAGE)
  // The spoofing hosts, the large sender and the one with a verdict; no other small passing one.
  expect(pages.reduce((a, b) => a + b, 0)).toBe(SPOOFING + 2)

  // What the rules raise over every source of the day loaded at once (the former evaluation).
  const stats = await deps.figures.stats(ref, { from: DAY, to: DAY })
  expect(stats).toHaveLength(PASSING + SPOOFING + 1)
  const spfTree = await resolveSpfTree({ dns }, 'many.example')
  const overrides = await deps.figures.overrides(ref)
  expect(overrides).toHaveLength(1)
  const views = classifyStats({ domain: 'many.example', stats, overrides, spfTree })
  const expected = reportAlerts({
    domain: 'many.example',
    now,
    daily: await deps.figures.daily(ref, { from: '2026-05-03', to: DAY }),
    sources: views.map((v) => ({ ...v, firstSeen: v.stats.firstSeen })),
    policy: 'missing',
  })
  expect(expected.map((c) => c.type).sort()).toEqual(['new_unknown_source', 'spoofing_attempt'])
  const stored = await tdb.database.db
    .select()
    .from(alerts)
    .where(and(eq(alerts.accountId, ref.accountId), eq(alerts.domainId, ref.domainId)))
  for (const candidate of expected) {
    const row = stored.find((r) => r.type === candidate.type && r.subject === candidate.subject)
    expect(row).toMatchObject({ severity: candidate.severity, title: candidate.title, status: 'open' })
    expect(row!.details).toEqual(JSON.parse(JSON.stringify(candidate.details)))
  }
  const spoofing = stored.find((r) => r.type === 'spoofing_attempt')!.details as any
  expect(spoofing.evidence.ips).toHaveLength(20)
  expect(spoofing.evidence.ipsOmitted).toBe(SPOOFING - 20)
})
