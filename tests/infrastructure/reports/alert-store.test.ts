import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import type { AlertCandidate, AlertType } from '../../../domain/alerts/alert.ts'
import { type AlertScope, type ReconcilePlan, reconcile } from '../../../domain/alerts/lifecycle.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { alerts } from '../../../infrastructure/db/schema/alerts.ts'
import { domains } from '../../../infrastructure/db/schema/domains.ts'
import { events } from '../../../infrastructure/db/schema/events.ts'
import { pgAlertStore } from '../../../infrastructure/repositories/pg-alert-store.ts'
import { eventsOf } from '../../../infrastructure/repositories/pg-event-outbox.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

/** An alert's public number, from its row key. */
const numberOf = async (id: string) =>
  (await db().select({ number: alerts.number }).from(alerts).where(eq(alerts.id, id)))[0]!.number

// The alert store on PostgreSQL and PGlite: plans applied with their outbox events in one
// transaction, one open alert per key under concurrency, user resolution without a second event,
// list filters and pages, and every query scoped by account.

let tdb: TestDatabase
let store: ReturnType<typeof pgAlertStore>
let owner: string
let stranger: string
let one: number
let two: number
let strangers: number

const at = (iso: string) => new Date(iso)
const db = () => tdb.database.db

function candidate(type: AlertType, subject = '', over: Partial<AlertCandidate> = {}): AlertCandidate {
  return {
    type,
    subject,
    severity: 'high',
    title: `${type} ${subject}`.trim(),
    details: { evidence: { seen: 1 }, remedy: 'Fix it.' },
    ...over,
  }
}

const scope = (domain: string | null, ...types: AlertType[]): AlertScope => ({
  domain,
  rulesEvaluated: types,
})

async function planFor(
  accountId: string,
  domainId: number | null,
  domain: string | null,
  candidates: AlertCandidate[],
  types: AlertType[],
  now: Date,
): Promise<ReconcilePlan> {
  return reconcile(await store.openAlerts(accountId, domainId), candidates, scope(domain, ...types), now)
}

async function eventsOfType(accountId: string, type: string) {
  return (await eventsOf(db(), accountId))
    .filter((e) => e.type === type)
    .map((e) => ({ ...e, data: e.data as Record<string, any> }))
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  store = pgAlertStore(db())
  const [a, b] = await db()
    .insert(accounts)
    .values([{ ingestKey: 'alert-owner' }, { ingestKey: 'alert-stranger' }])
    .returning({ id: accounts.id })
  owner = a!.id
  stranger = b!.id
  const rows = await db()
    .insert(domains)
    .values([
      { accountId: owner, name: 'one.example', verificationToken: 't1' },
      { accountId: owner, name: 'two.example', verificationToken: 't2' },
      { accountId: stranger, name: 'one.example', verificationToken: 't3' },
    ])
    .returning({ id: domains.id })
  one = rows[0]!.id
  two = rows[1]!.id
  strangers = rows[2]!.id
}, 60_000)
afterAll(() => tdb.drop())

describe('applyPlan', () => {
  test('creates an alert and its alert.created event; an unchanged condition writes nothing', async () => {
    const now = at('2026-04-01T10:00:00Z')
    const plan = await planFor(owner, one, 'one.example', [candidate('spf_missing')], ['spf_missing'], now)
    expect(await store.applyPlan(owner, one, plan, now)).toEqual({ created: 1, updated: 0, resolved: 0 })
    const open = await store.openAlerts(owner, one)
    expect(open).toHaveLength(1)
    expect(open[0]).toMatchObject({
      domain: 'one.example',
      type: 'spf_missing',
      subject: '',
      severity: 'high',
    })
    const created = await eventsOfType(owner, 'alert.created')
    expect(created).toHaveLength(1)
    expect(created[0]!.data).toEqual({
      alert_id: await numberOf(open[0]!.alertId),
      domain: 'one.example',
      severity: 'high',
      title: 'spf_missing',
    })
    expect(created[0]!.occurredAt).toEqual(now)

    const again = await planFor(owner, one, 'one.example', [candidate('spf_missing')], ['spf_missing'], now)
    expect(again).toEqual({ create: [], update: [], resolve: [] })
  })

  test('updates severity, title and details in place, without an event', async () => {
    const now = at('2026-04-01T11:00:00Z')
    const changed = candidate('spf_missing', '', { severity: 'critical', title: 'worse' })
    const plan = await planFor(owner, one, 'one.example', [changed], ['spf_missing'], now)
    expect(plan.update).toHaveLength(1)
    const before = await eventsOf(db(), owner)
    expect(await store.applyPlan(owner, one, plan, now)).toEqual({ created: 0, updated: 1, resolved: 0 })
    const alert = await store.get(owner, await numberOf(plan.update[0]!.alertId))
    expect(alert).toMatchObject({ severity: 'critical', title: 'worse', status: 'open', updatedAt: now })
    expect(alert!.createdAt).toEqual(at('2026-04-01T10:00:00Z'))
    expect(await eventsOf(db(), owner)).toHaveLength(before.length)
  })

  test('resolves what cleared, with alert.resolved (reason condition_cleared)', async () => {
    const now = at('2026-04-01T12:00:00Z')
    const plan = await planFor(owner, one, 'one.example', [], ['spf_missing'], now)
    expect(plan.resolve).toHaveLength(1)
    expect(await store.applyPlan(owner, one, plan, now)).toEqual({ created: 0, updated: 0, resolved: 1 })
    const alert = await store.get(owner, await numberOf(plan.resolve[0]!.alertId))
    expect(alert).toMatchObject({ status: 'resolved', resolution: 'condition_cleared', resolvedAt: now })
    const resolved = await eventsOfType(owner, 'alert.resolved')
    expect(resolved.map((e) => e.data)).toEqual([
      {
        alert_id: alert!.number,
        domain: 'one.example',
        severity: 'critical',
        title: 'worse',
        resolved_at: now.toISOString(),
        reason: 'condition_cleared',
      },
    ])
    // Applying the same resolution again (a racing evaluation) changes nothing and sends nothing.
    expect(await store.applyPlan(owner, one, plan, now)).toEqual({ created: 0, updated: 0, resolved: 0 })
    expect(await eventsOfType(owner, 'alert.resolved')).toHaveLength(1)
  })

  test('two evaluations racing open one alert and send one event', async () => {
    const now = at('2026-04-02T10:00:00Z')
    const c = candidate('dkim_missing', 's1')
    const [p1, p2] = await Promise.all([
      planFor(owner, two, 'two.example', [c], ['dkim_missing'], now),
      planFor(owner, two, 'two.example', [c], ['dkim_missing'], now),
    ])
    expect(p1.create).toHaveLength(1)
    expect(p2.create).toHaveLength(1)
    const results = await Promise.all([
      store.applyPlan(owner, two, p1, now),
      store.applyPlan(owner, two, p2, now),
    ])
    expect(results.map((r) => r.created).sort()).toEqual([0, 1])
    expect(await store.openAlerts(owner, two)).toHaveLength(1)
    const created = (await eventsOfType(owner, 'alert.created')).filter(
      (e) => e.data.domain === 'two.example',
    )
    expect(created).toHaveLength(1)
  })

  test('account-wide alerts have no domain and are unique per type too', async () => {
    const now = at('2026-04-02T11:00:00Z')
    const c = candidate('webhook_delivery_failing')
    const plans = await Promise.all([
      planFor(owner, null, null, [c], ['webhook_delivery_failing'], now),
      planFor(owner, null, null, [c], ['webhook_delivery_failing'], now),
    ])
    await Promise.all(plans.map((plan) => store.applyPlan(owner, null, plan, now)))
    const open = await store.openAlerts(owner, null)
    expect(open).toHaveLength(1)
    expect(open[0]!.domain).toBeNull()
    const number = await numberOf(open[0]!.alertId)
    const created = (await eventsOfType(owner, 'alert.created')).filter((e) => e.data.alert_id === number)
    expect(created.map((e) => e.data.domain)).toEqual([null])
    // The domain's own alerts are not the account's.
    expect((await store.openAlerts(owner, two)).map((a) => a.type)).toEqual(['dkim_missing'])
  })

  test('a failure rolls back the alerts and their events together', async () => {
    const now = at('2026-04-03T10:00:00Z')
    const before = await eventsOf(db(), owner)
    const plan: ReconcilePlan = {
      create: [
        candidate('spf_void_lookups'),
        // A candidate the table refuses (severity is required): the whole plan must roll back.
        candidate('spf_permerror', '', { severity: null as never }),
      ],
      update: [],
      resolve: [],
    }
    await expect(store.applyPlan(owner, one, plan, now)).rejects.toThrow()
    const rows = await db()
      .select()
      .from(alerts)
      .where(and(eq(alerts.accountId, owner), eq(alerts.type, 'spf_void_lookups')))
    expect(rows).toHaveLength(0)
    expect(await eventsOf(db(), owner)).toHaveLength(before.length)
  })

  test("another account's domain id writes nothing", async () => {
    const now = at('2026-04-03T11:00:00Z')
    const plan: ReconcilePlan = { create: [candidate('spf_missing')], update: [], resolve: [] }
    expect(await store.applyPlan(owner, strangers, plan, now)).toEqual({
      created: 0,
      updated: 0,
      resolved: 0,
    })
    const rows = await db().select().from(alerts).where(eq(alerts.domainId, strangers))
    expect(rows).toHaveLength(0)
  })
})

describe('resolve (by the user)', () => {
  test('resolves once: a second call returns it unchanged and sends no second event', async () => {
    const open = await store.openAlerts(owner, two)
    const id = await numberOf(open[0]!.alertId)
    const now = at('2026-04-04T10:00:00Z')
    const first = await store.resolve(owner, id, now)
    expect(first).toMatchObject({ status: 'resolved', resolution: 'user', resolvedAt: now })
    const second = await store.resolve(owner, id, at('2026-04-05T10:00:00Z'))
    expect(second).toEqual(first)
    const resolved = (await eventsOfType(owner, 'alert.resolved')).filter((e) => e.data.alert_id === id)
    expect(resolved.map((e) => e.data.reason)).toEqual(['user'])
    expect(resolved[0]!.data.resolved_at).toBe(now.toISOString())
  })

  test('concurrent resolutions send one event', async () => {
    const [alert] = await store.openAlerts(owner, null)
    const number = await numberOf(alert!.alertId)
    const now = at('2026-04-04T11:00:00Z')
    const results = await Promise.all([store.resolve(owner, number, now), store.resolve(owner, number, now)])
    expect(results.map((r) => r?.status)).toEqual(['resolved', 'resolved'])
    const resolved = (await eventsOfType(owner, 'alert.resolved')).filter((e) => e.data.alert_id === number)
    expect(resolved).toHaveLength(1)
  })

  test('the same condition later opens a new alert with a new id', async () => {
    const now = at('2026-04-06T10:00:00Z')
    const plan = await planFor(
      owner,
      two,
      'two.example',
      [candidate('dkim_missing', 's1')],
      ['dkim_missing'],
      now,
    )
    expect(plan.create).toHaveLength(1)
    await store.applyPlan(owner, two, plan, now)
    const rows = await db().select().from(alerts).where(eq(alerts.domainId, two))
    expect(rows.map((r) => r.status).sort()).toEqual(['open', 'resolved'])
  })

  test("unknown numbers and another account's alerts are null", async () => {
    const [alert] = await store.openAlerts(owner, two)
    const number = await numberOf(alert!.alertId)
    expect(await store.get(stranger, number)).toBeNull()
    expect(await store.resolve(stranger, number, new Date())).toBeNull()
    expect((await store.get(owner, number))?.status).toBe('open')
    expect(await store.get(owner, 2 ** 40)).toBeNull()
    expect(await store.resolve(owner, 2 ** 40, new Date())).toBeNull()
    expect(await eventsOf(db(), stranger)).toEqual([])
  })
})

describe('list', () => {
  test('newest first, filtered, paged, per account', async () => {
    const page = { page: 1, perPage: 2 }
    const all = await store.list(owner, {}, { page: 1, perPage: 100 })
    expect(all.total).toBe(4)
    const times = all.items.map((a) => a.createdAt.getTime())
    expect(times).toEqual([...times].sort((a, b) => b - a))
    const first = await store.list(owner, {}, page)
    expect(first.items.map((a) => a.alertId)).toEqual(all.items.slice(0, 2).map((a) => a.alertId))
    expect(first.total).toBe(4)
    expect((await store.list(owner, {}, { page: 3, perPage: 2 })).items).toEqual([])

    expect((await store.list(owner, { status: 'open' }, page)).total).toBe(1)
    expect((await store.list(owner, { status: 'resolved' }, page)).total).toBe(3)
    expect((await store.list(owner, { domain: 'one.example' }, page)).items.map((a) => a.type)).toEqual([
      'spf_missing',
    ])
    expect((await store.list(owner, { type: 'dkim_missing' }, page)).total).toBe(2)
    expect((await store.list(owner, { severity: 'critical' }, page)).total).toBe(1)
    const since = await store.list(owner, { since: at('2026-04-02T11:00:00Z') }, page)
    expect(since.items.map((a) => a.type)).toEqual(['dkim_missing', 'webhook_delivery_failing'])
    const until = await store.list(owner, { until: at('2026-04-02T10:00:00Z') }, page)
    expect(until.items.map((a) => a.type)).toEqual(['spf_missing'])

    expect(await store.list(stranger, {}, page)).toEqual({ items: [], total: 0 })
    expect((await store.list(stranger, { domain: 'one.example' }, page)).total).toBe(0)
  })

  test('every event row belongs to the account whose alert changed', async () => {
    const rows = await db().select({ accountId: events.accountId }).from(events)
    expect(new Set(rows.map((r) => r.accountId))).toEqual(new Set([owner]))
  })
})
