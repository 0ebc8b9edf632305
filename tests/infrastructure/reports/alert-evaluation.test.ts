import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import {
  alertWork,
  type EvaluationDeps,
  evaluatePosture,
  evaluateReports,
} from '../../../domain/alerts/evaluation.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { alerts } from '../../../infrastructure/db/schema/alerts.ts'
import { domains } from '../../../infrastructure/db/schema/domains.ts'
import { createAggregateWriter } from '../../../infrastructure/repositories/aggregate-report-writer.ts'
import { pgAlertStore } from '../../../infrastructure/repositories/pg-alert-store.ts'
import { pgDomainCheckStore } from '../../../infrastructure/repositories/pg-domain-check-store.ts'
import { alertEvaluationDeps } from '../../../src/compose/alerts.ts'
import { stores } from '../../../src/compose/stores.ts'
import { type Check, check, REPORT_ADDRESS } from '../../domain/alerts/posture-fixture.ts'
import { reportMetadata } from '../../support/aggregate-metadata.ts'
import { aggregateRecord, streamOf } from '../../support/aggregate-records.ts'
import { memoryDns } from '../../support/memory-dns.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The evaluation jobs over stored facts, on PostgreSQL and PGlite: posture and change rules over the
// check history (idempotent, user resolutions respected, checks between two runs compared too), and
// report rules over the rollups. The operations rules are in alert-operations.test.ts.

let tdb: TestDatabase
let owner: string
let domainId: number
let reportsId: number
const clock = { now: new Date('2026-05-10T08:00:00Z') }
let deps: EvaluationDeps
const db = () => tdb.database.db
const store = () => pgAlertStore(db())
const NONE = { created: 0, updated: 0, resolved: 0 }
const HOUR = 3_600_000
const T0 = Date.parse('2026-05-10T08:00:00Z')
const iso = (ms: number) => new Date(ms).toISOString()

/** Stores a check the way the posture checks do (history row and the domain's summary). */
async function storeCheck(c: Check, atMs: number) {
  const at = new Date(atMs)
  await pgDomainCheckStore(db()).save(owner, 'example.com', {
    checkedAt: at,
    freshUntil: at,
    posture: c.posture,
    findings: { ...c.findings, checkedAt: at.toISOString() },
  })
}

async function rows(type: string, id: number | null = domainId) {
  return db()
    .select()
    .from(alerts)
    .where(
      and(
        eq(alerts.accountId, owner),
        eq(alerts.type, type),
        id === null ? undefined : eq(alerts.domainId, id),
      ),
    )
    .orderBy(alerts.createdAt)
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  deps = alertEvaluationDeps(stores(tdb.database), { now: () => clock.now, dns: memoryDns({}) })
  const [a] = await db().insert(accounts).values({ ingestKey: 'eval-owner' }).returning({ id: accounts.id })
  owner = a!.id
  const created = await db()
    .insert(domains)
    .values([
      {
        accountId: owner,
        name: 'example.com',
        verificationToken: 't1',
        createdAt: new Date(T0 - 30 * 24 * HOUR),
      },
      {
        accountId: owner,
        name: 'reports.example',
        verificationToken: 't2',
        verifiedAt: new Date(T0 - 20 * 24 * HOUR),
        dmarcPolicy: 'none',
      },
    ])
    .returning({ id: domains.id })
  domainId = created[0]!.id
  reportsId = created[1]!.id
}, 60_000)
afterAll(() => tdb.drop())

describe('posture and change rules', () => {
  test('a healthy first check raises nothing', async () => {
    await storeCheck(await check(), T0)
    clock.now = new Date(T0 + 60_000)
    expect(await evaluatePosture(deps, { accountId: owner, domainId })).toEqual(NONE)
    expect(await alertWork(deps).postureDue()).toEqual([{ accountId: owner, domainId }])
  })

  test('a removed SPF record: spf_missing and dns_record_removed, once however often evaluated', async () => {
    await storeCheck(await check({ 'example.com': null }), T0 + 2 * HOUR)
    clock.now = new Date(T0 + 2 * HOUR + 60_000)
    expect(await evaluatePosture(deps, { accountId: owner, domainId })).toEqual({ ...NONE, created: 2 })
    expect((await rows('spf_missing')).map((r) => r.status)).toEqual(['open'])
    const [removed] = await rows('dns_record_removed')
    expect(removed).toMatchObject({ subject: 'spf', severity: 'high', status: 'open' })
    clock.now = new Date(T0 + 2 * HOUR + 15 * 60_000)
    expect(await evaluatePosture(deps, { accountId: owner, domainId })).toEqual(NONE)
  })

  test('what the user resolved stays resolved until a newer check', async () => {
    for (const type of ['spf_missing', 'dns_record_removed'])
      await store().resolve(owner, (await rows(type))[0]!.number, new Date(T0 + 2 * HOUR + 20 * 60_000))
    clock.now = new Date(T0 + 2 * HOUR + 30 * 60_000)
    expect(await evaluatePosture(deps, { accountId: owner, domainId })).toEqual(NONE)

    // The next check still finds no SPF record: the condition holds, so a new alert opens; the
    // removal itself was reported already and is not reported again.
    await storeCheck(await check({ 'example.com': null }), T0 + 4 * HOUR)
    clock.now = new Date(T0 + 4 * HOUR + 60_000)
    expect(await evaluatePosture(deps, { accountId: owner, domainId })).toEqual({ ...NONE, created: 1 })
    expect((await rows('spf_missing')).map((r) => r.status)).toEqual(['resolved', 'open'])
    expect(await rows('dns_record_removed')).toHaveLength(1)
  })

  test('two checks between runs are both compared, in order', async () => {
    await storeCheck(await check(), T0 + 6 * HOUR)
    const weaker = `v=DMARC1; p=none; rua=mailto:${REPORT_ADDRESS}`
    await storeCheck(await check({ '_dmarc.example.com': weaker }), T0 + 6 * HOUR + 5 * 60_000)
    clock.now = new Date(T0 + 6 * HOUR + 10 * 60_000)
    await evaluatePosture(deps, { accountId: owner, domainId })
    const changed = await rows('dns_record_changed')
    expect(changed.map((r) => [r.subject, r.severity])).toEqual([
      ['spf', 'info'],
      ['dmarc', 'medium'],
    ])
    expect((changed[0]!.details as any).evidence.detectedAt).toBe(iso(T0 + 6 * HOUR))
    expect((await rows('dmarc_weakened')).map((r) => r.severity)).toEqual(['high'])
    const spf = await rows('spf_missing')
    expect(spf.at(-1)).toMatchObject({ status: 'resolved', resolution: 'condition_cleared' })
    clock.now = new Date(T0 + 6 * HOUR + 25 * 60_000)
    expect(await evaluatePosture(deps, { accountId: owner, domainId })).toEqual(NONE)
  })
})

describe('report rules', () => {
  const yesterday = '2026-05-09'
  test('a failing day opens dmarc_failure_rate; once the window has moved on it clears', async () => {
    const records = [aggregateRecord('198.51.100.7', { count: 300, headerFrom: 'reports.example' })]
    await createAggregateWriter(tdb.database).write({
      accountId: owner,
      domainId: reportsId,
      messageId: null,
      metadata: reportMetadata({
        reportId: 'r1',
        begin: Date.parse(`${yesterday}T00:00:00Z`) / 1000,
        domain: 'reports.example',
      }),
      records: streamOf(records),
      evaluate: () => ({ dkimAligned: false, spfAligned: false, dmarcPass: false }),
      contentHash: () => 'eval-r1',
    })
    clock.now = new Date('2026-05-10T09:00:00Z')
    const ref = { accountId: owner, domainId: reportsId }
    expect(await alertWork(deps).reportsDue()).toEqual([ref])
    const applied = await evaluateReports(deps, ref)
    expect(applied.created).toBeGreaterThan(0)
    const [rate] = await rows('dmarc_failure_rate', reportsId)
    expect(rate).toMatchObject({ status: 'open', severity: 'high' })
    expect(rate!.title).toContain('300 messages from reports.example failed DMARC')
    // No PTR, no known service, nothing passing: spoofing, at p=none delivered, so high.
    expect((await rows('spoofing_attempt', reportsId)).map((r) => r.severity)).toEqual(['high'])
    expect(await evaluateReports(deps, ref)).toEqual(NONE)

    clock.now = new Date('2026-05-20T09:00:00Z')
    // No figures in the window any more, but the open alerts keep the domain on the list.
    expect(await alertWork(deps).reportsDue()).toEqual([ref])
    await evaluateReports(deps, ref)
    expect((await rows('dmarc_failure_rate', reportsId)).map((r) => r.resolution)).toEqual([
      'condition_cleared',
    ])
    expect(await alertWork(deps).reportsDue()).toEqual([])
  })
})
