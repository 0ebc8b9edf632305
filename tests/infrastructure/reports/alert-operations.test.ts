import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import type { AlertCandidate } from '../../../domain/alerts/alert.ts'
import { alertWork, type EvaluationDeps, evaluateAccount } from '../../../domain/alerts/evaluation.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { alerts } from '../../../infrastructure/db/schema/alerts.ts'
import { domains } from '../../../infrastructure/db/schema/domains.ts'
import {
  aggregateReports,
  forensicReports,
  ingestMessages,
} from '../../../infrastructure/db/schema/reports.ts'
import { webhookAttempts, webhookDeliveries } from '../../../infrastructure/db/schema/webhooks.ts'
import { pgAlertFacts } from '../../../infrastructure/repositories/pg-alert-facts.ts'
import { pgAlertStore } from '../../../infrastructure/repositories/pg-alert-store.ts'
import { eventsOf } from '../../../infrastructure/repositories/pg-event-outbox.ts'
import { alertEvaluationDeps } from '../../../src/compose/alerts.ts'
import { stores } from '../../../src/compose/stores.ts'
import { memoryDns } from '../../support/memory-dns.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The operations evaluation of an account on PostgreSQL and PGlite: ingest quarantine growth and
// failing webhooks (account-wide alerts), failure reports (counted while open, not twice after),
// silence for verified domains; and the evidence read-backs the evaluations rely on.

let tdb: TestDatabase
let owner: string
let idle: string
let domainId: number
let reportsId: number
let unverifiedId: number
const clock = { now: new Date('2026-05-21T09:00:00Z') }
let deps: EvaluationDeps
const db = () => tdb.database.db
const store = () => pgAlertStore(db())
const NONE = { created: 0, updated: 0, resolved: 0 }

async function rows(type: string, id: number | null) {
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
  const [a, b] = await db()
    .insert(accounts)
    .values([{ ingestKey: 'ops-owner' }, { ingestKey: 'ops-idle' }])
    .returning({ id: accounts.id })
  owner = a!.id
  idle = b!.id
  const created = await db()
    .insert(domains)
    .values([
      { accountId: owner, name: 'example.com', verificationToken: 't1' },
      {
        accountId: owner,
        name: 'reports.example',
        verificationToken: 't2',
        verifiedAt: new Date('2026-04-01T00:00:00Z'),
      },
      { accountId: owner, name: 'quiet.example', verificationToken: 't3' },
    ])
    .returning({ id: domains.id })
  domainId = created[0]!.id
  reportsId = created[1]!.id
  unverifiedId = created[2]!.id
  // The domain's last aggregate report arrived (and was stored) on 2026-05-18 at 12:00.
  await db()
    .insert(aggregateReports)
    .values({
      accountId: owner,
      domainId: reportsId,
      reporterOrg: 'R',
      reportId: 'r1',
      policyDomain: 'reports.example',
      beginAt: new Date('2026-05-17T00:00:00Z'),
      endAt: new Date('2026-05-17T23:59:59Z'),
      contentHash: 'ops-r1',
      variant: 'rfc7489',
      policy: {},
      errors: [],
      recordCount: 1,
      messageCount: 1,
      receivedAt: new Date('2026-05-18T12:00:00Z'),
      createdAt: new Date('2026-05-18T12:00:00Z'),
    })
}, 60_000)
afterAll(() => tdb.drop())

describe('operations rules', () => {
  test('only accounts with something to evaluate are scheduled', async () => {
    expect(await alertWork(deps).accountsDue()).toEqual([owner])
    expect(await evaluateAccount(deps, idle)).toEqual(NONE)
  })

  test('quarantine growth and failing webhooks are account-wide alerts', async () => {
    clock.now = new Date('2026-05-21T09:00:00Z')
    await db()
      .insert(ingestMessages)
      .values(
        Array.from({ length: 12 }, (_, i) => ({
          accountId: owner,
          source: 'http' as const,
          size: 10,
          sha256: `q${i}`,
          receivedAt: new Date('2026-05-21T08:00:00Z'),
          status: 'quarantined' as const,
          processedAt: new Date('2026-05-21T08:00:00Z'),
        })),
      )
    const failed = crypto.randomUUID()
    const at = new Date('2026-05-21T08:30:00Z')
    await db().insert(webhookDeliveries).values({
      id: failed,
      accountId: owner,
      event: 'alert.created',
      data: {},
      url: 'https://hooks.example/in',
      status: 'failed',
      attempts: 5,
      createdAt: at,
      updatedAt: at,
    })
    await db()
      .insert(webhookAttempts)
      .values({ deliveryId: failed, attempt: 5, at, verdict: 'give_up', outcome: 'HTTP 503', latencyMs: 12 })
    await evaluateAccount(deps, owner)
    const [quarantine] = await rows('ingest_quarantine_growing', null)
    expect(quarantine).toMatchObject({ domainId: null, status: 'open' })
    const [webhook] = await rows('webhook_delivery_failing', null)
    expect(webhook).toMatchObject({ domainId: null, status: 'open' })
    expect((webhook!.details as any).evidence).toMatchObject({ failingDeliveries: 1, lastError: 'HTTP 503' })
    expect(await evaluateAccount(deps, owner)).toEqual(NONE)

    // A later delivery that succeeds clears the webhook alert.
    const later = new Date('2026-05-21T09:10:00Z')
    await db().insert(webhookDeliveries).values({
      id: crypto.randomUUID(),
      accountId: owner,
      event: 'alert.created',
      data: {},
      url: 'https://hooks.example/in',
      status: 'delivered',
      attempts: 1,
      createdAt: later,
      updatedAt: later,
    })
    clock.now = new Date('2026-05-21T09:15:00Z')
    await evaluateAccount(deps, owner)
    expect((await rows('webhook_delivery_failing', null)).map((r) => r.resolution)).toEqual([
      'condition_cleared',
    ])
    const created = (await eventsOf(db(), owner)).filter(
      (e) => e.type === 'alert.created' && (e.data as any).alert_id === quarantine!.number,
    )
    expect((created[0]!.data as any).domain).toBeNull()
  })

  test('failure reports: one alert counting them while open; after it is resolved, only newer ones', async () => {
    const report = (i: number, createdAt: string) => ({
      accountId: owner,
      domainId: reportsId,
      contentHash: `f${i}`,
      sourceIp: '203.0.113.5',
      redacted: true,
      report: {},
      createdAt: new Date(createdAt),
    })
    await db()
      .insert(forensicReports)
      .values([report(1, '2026-05-21T09:20:00.123456Z'), report(2, '2026-05-21T09:21:00Z')])
    clock.now = new Date('2026-05-21T09:30:00Z')
    await evaluateAccount(deps, owner)
    let found = await rows('failure_report_received', reportsId)
    expect(found.map((r) => r.title)).toEqual(['2 failure reports received for reports.example'])
    await db().insert(forensicReports).values(report(3, '2026-05-21T09:40:00Z'))
    clock.now = new Date('2026-05-21T09:45:00Z')
    expect(await evaluateAccount(deps, owner)).toMatchObject({ created: 0, updated: 1 })
    found = await rows('failure_report_received', reportsId)
    expect(found.map((r) => r.title)).toEqual(['3 failure reports received for reports.example'])

    await store().resolve(owner, found[0]!.number, new Date('2026-05-21T09:50:00Z'))
    clock.now = new Date('2026-05-21T10:00:00Z')
    expect(await evaluateAccount(deps, owner)).toEqual(NONE)
    await db().insert(forensicReports).values(report(4, '2026-05-21T10:05:00Z'))
    clock.now = new Date('2026-05-21T10:15:00Z')
    await evaluateAccount(deps, owner)
    found = await rows('failure_report_received', reportsId)
    expect(found.map((r) => [r.status, r.title])).toEqual([
      ['resolved', '3 failure reports received for reports.example'],
      ['open', '1 failure report received for reports.example'],
    ])
  })

  test('no_reports after three silent days, for verified domains only', async () => {
    clock.now = new Date('2026-05-21T11:00:00Z')
    await evaluateAccount(deps, owner)
    expect(await rows('no_reports', reportsId)).toEqual([])
    clock.now = new Date('2026-05-21T13:00:00Z')
    await evaluateAccount(deps, owner)
    expect((await rows('no_reports', reportsId)).map((r) => r.title)).toEqual([
      'No DMARC reports received for reports.example for 3 days',
    ])
    expect(await rows('no_reports', unverifiedId)).toEqual([])
    expect(await rows('no_reports', domainId)).toEqual([])
  })
})

describe('what the evaluations read back', () => {
  const candidate = (type: AlertCandidate['type'], subject: string, detectedAt: string): AlertCandidate => ({
    type,
    subject,
    severity: 'low',
    title: `${type} ${subject}`,
    details: { evidence: { detectedAt }, remedy: 'Check.' },
  })

  test('the latest evidence time of a rule, and the keys the user resolved since a time', async () => {
    const facts = pgAlertFacts(db())
    const now = new Date('2026-05-22T10:00:00Z')
    await store().applyPlan(
      owner,
      domainId,
      {
        create: [
          candidate('dns_record_changed', 'spf', '2026-05-22T09:00:00.123Z'),
          candidate('dns_record_changed', 'dmarc', '2026-05-22T09:30:00.456Z'),
        ],
        update: [],
        resolve: [],
      },
      now,
    )
    const latest = (account: string, id: number, status?: 'resolved') =>
      facts.latestEvidenceTime(account, id, ['dns_record_changed'], 'detectedAt', status)
    expect(await latest(owner, domainId)).toEqual(new Date('2026-05-22T09:30:00.456Z'))
    expect(await latest(owner, reportsId)).toBeNull()
    expect(await latest(idle, domainId)).toBeNull()
    expect(await latest(owner, domainId, 'resolved')).toBeNull()

    const [spf] = await rows('dns_record_changed', domainId)
    await store().resolve(owner, spf!.number, new Date('2026-05-22T11:00:00Z'))
    const resolved = (since: string, id = domainId) =>
      facts.userResolvedSince(owner, id, ['dns_record_changed'], new Date(since))
    expect(await resolved('2026-05-22T11:00:00Z')).toEqual([{ type: 'dns_record_changed', subject: 'spf' }])
    expect(await resolved('2026-05-22T11:00:00.001Z')).toEqual([])
    expect(await resolved('2026-05-22T00:00:00Z', reportsId)).toEqual([])
    // Resolved by the service (the webhook alert above), not the user: not counted.
    expect(
      await facts.userResolvedSince(
        owner,
        null,
        ['webhook_delivery_failing'],
        new Date('2026-05-01T00:00:00Z'),
      ),
    ).toEqual([])
  })
})
