import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, inArray } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import { domainVerified } from '../../../domain/events/event.ts'
import { secretBox } from '../../../infrastructure/crypto/secret-box.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { events } from '../../../infrastructure/db/schema/events.ts'
import { webhookDeliveries, webhookSettings } from '../../../infrastructure/db/schema/webhooks.ts'
import { createQueues, DELIVER_WEBHOOK, type DeliverJob } from '../../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../../infrastructure/queue/pg-boss.ts'
import { appendEvent } from '../../../infrastructure/repositories/pg-event-outbox.ts'
import { pgWebhookRelay } from '../../../infrastructure/repositories/pg-webhook-relay.ts'
import { pgWebhookStore } from '../../../infrastructure/repositories/pg-webhook-store.ts'
import { backend, createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The webhook store and relay on PostgreSQL and PGlite: settings with a sealed secret, the relay's
// one-transaction step (deliveries, dispatched marks and pg-boss jobs together), idempotence, two
// relays racing under SKIP LOCKED, the attempt bookkeeping's stale-job guard, ping and redelivery.

let tdb: TestDatabase
let boss: PgBoss
let store: ReturnType<typeof pgWebhookStore>
let relay: ReturnType<typeof pgWebhookRelay>
let owner: string
let stranger: string
const now = new Date('2026-03-01T10:00:00.000Z')
const SECRET_A = `whsec_${'a'.repeat(43)}`
const SECRET_B = `whsec_${'b'.repeat(43)}`
const db = () => tdb.database.db

async function jobsOf(deliveryId: string) {
  return boss.findJobs<DeliverJob>(DELIVER_WEBHOOK.name, { data: { deliveryId } })
}

async function append(accountId: string, n: number): Promise<string[]> {
  const before = new Set((await db().select({ id: events.id }).from(events)).map((r) => r.id))
  for (let i = 0; i < n; i++)
    await appendEvent(db(), accountId, domainVerified(`d${i}.example`, new Date(now.getTime() + i)))
  return (await db().select({ id: events.id }).from(events)).map((r) => r.id).filter((id) => !before.has(id))
}

async function drain(limit: number): Promise<number> {
  let total = 0
  while (true) {
    const step = await relay.dispatchEvents(limit, now)
    total += step.events
    if (step.events === 0) return total
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  boss = await startBoss(tdb.database, { background: false })
  await createQueues(boss)
  const secrets = await secretBox(new Uint8Array(32).fill(7))
  store = pgWebhookStore(db(), { secrets })
  relay = pgWebhookRelay(db(), boss)
  const [a, b] = await db()
    .insert(accounts)
    .values([{ ingestKey: 'wh-owner' }, { ingestKey: 'wh-stranger' }])
    .returning({ id: accounts.id })
  owner = a!.id
  stranger = b!.id
}, 60_000)
afterAll(async () => {
  await boss.stop({ graceful: false })
  await tdb.drop()
})

describe('settings', () => {
  test('nothing until saved; the first URL creates the secret, later saves keep it', async () => {
    expect(await store.getSettings(owner)).toEqual({ url: null, secret: null, updatedAt: null })
    const first = await store.putUrl(owner, 'https://hooks.example/one', SECRET_A, now)
    expect(first).toEqual({ url: 'https://hooks.example/one', secret: SECRET_A, updatedAt: now })
    const later = new Date(now.getTime() + 1000)
    const second = await store.putUrl(owner, 'https://hooks.example/two', SECRET_B, later)
    expect(second).toEqual({ url: 'https://hooks.example/two', secret: SECRET_A, updatedAt: later })
    // Sealed at rest, bound to the account.
    const [row] = await db().select().from(webhookSettings).where(eq(webhookSettings.accountId, owner))
    expect(row!.secretSealed).toStartWith('v1.')
    expect(row!.secretSealed).not.toContain(SECRET_A.slice(6))
    expect(await store.getSettings(stranger)).toEqual({ url: null, secret: null, updatedAt: null })
  })

  test('rotation replaces the secret and keeps the URL; it works before any URL too', async () => {
    const rotated = await store.rotateSecret(owner, SECRET_B, now)
    expect(rotated).toMatchObject({ url: 'https://hooks.example/two', secret: SECRET_B })
    expect(await store.rotateSecret(stranger, SECRET_A, now)).toMatchObject({ url: null, secret: SECRET_A })
  })
})

describe('relay', () => {
  test('one delivery and one job per event of an account with a URL; others are only marked', async () => {
    const mine = await append(owner, 3)
    const theirs = await append(stranger, 2)
    expect(await relay.hasUndispatched()).toBe(true)
    expect(await relay.dispatchEvents(100, now)).toEqual({ events: 5, deliveries: 3 })
    expect(await relay.hasUndispatched()).toBe(false)

    const deliveries = await db()
      .select()
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.id, [...mine, ...theirs]))
    expect(deliveries.map((d) => d.id).sort()).toEqual([...mine].sort())
    expect(deliveries[0]).toMatchObject({
      accountId: owner,
      event: 'domain.verified',
      url: 'https://hooks.example/two',
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
    })
    for (const id of mine) {
      const jobs = await jobsOf(id)
      expect(jobs.map((j) => j.data)).toEqual([{ deliveryId: id, attempt: 1 }])
    }
    const undispatched = await db()
      .select()
      .from(events)
      .where(inArray(events.id, [...mine, ...theirs]))
    expect(undispatched.every((e) => e.dispatchedAt?.getTime() === now.getTime())).toBe(true)

    // Idempotent: a second step finds nothing and adds nothing.
    expect(await relay.dispatchEvents(100, now)).toEqual({ events: 0, deliveries: 0 })
    for (const id of mine) expect(await jobsOf(id)).toHaveLength(1)
  })

  test('two relays racing: every event becomes exactly one delivery and one job', async () => {
    const ids = await append(owner, 60)
    const [a, b] = await Promise.all([drain(7), drain(7)])
    expect(a + b).toBe(60)
    const rows = await db()
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.id, ids))
    expect(rows).toHaveLength(60)
    const jobs = await Promise.all(ids.map(jobsOf))
    expect(jobs.map((j) => j.length)).toEqual(ids.map(() => 1))
  })

  test.if(backend === 'postgres')('events locked by another relay are skipped, not waited for', async () => {
    const ids = await append(owner, 4)
    if (tdb.database.kind !== 'postgres') throw new Error('postgres only')
    await tdb.database.client.begin(async (tx) => {
      // Another relay holds the first two events (its transaction is still open).
      await tx`select id from events where id in ${tx(ids.slice(0, 2))} for update`
      const step = await relay.dispatchEvents(100, now)
      expect(step).toEqual({ events: 2, deliveries: 2 })
    })
    expect(await relay.dispatchEvents(100, now)).toEqual({ events: 2, deliveries: 2 })
    for (const id of ids) expect(await jobsOf(id)).toHaveLength(1)
  })
})

describe('attempts', () => {
  test('an attempt is recorded once; a stale or duplicate job changes nothing', async () => {
    const [id] = await append(owner, 1)
    await relay.dispatchEvents(100, now)
    const failedAt = new Date(now.getTime() + 2000)
    const record = {
      deliveryId: id!,
      attempt: 1,
      at: now,
      verdict: 'retry' as const,
      outcome: 'HTTP 503',
      status: 503,
      latencyMs: 12,
      responseSnippet: 'busy',
      url: 'https://hooks.example/two',
      step: { state: 'pending' as const, nextAttemptAt: new Date(failedAt.getTime() + 5000) },
      firstFailureAt: failedAt,
      now: failedAt,
    }
    expect(await relay.recordAttempt(record)).toBe(true)
    expect(await relay.recordAttempt(record)).toBe(false)
    expect(await relay.defer({ deliveryId: id!, attempt: 1 }, now, now)).toBe(false)
    const context = await relay.attemptContext(id!)
    expect(context).toMatchObject({ status: 'pending', attempts: 1, firstFailureAt: failedAt })
    expect(context!.url).toBe('https://hooks.example/two')
    const jobs = await boss.findJobs<DeliverJob>(DELIVER_WEBHOOK.name, {
      data: { deliveryId: id!, attempt: 2 },
    })
    expect(jobs).toHaveLength(1)
    expect(jobs[0]!.startAfter).toEqual(new Date(failedAt.getTime() + 5000))

    // The hourly limit: the same attempt waits, nothing used up.
    const hour = new Date('2026-03-01T11:00:00.000Z')
    expect(await relay.defer({ deliveryId: id!, attempt: 2 }, hour, now)).toBe(true)
    const deferred = await boss.findJobs<DeliverJob>(DELIVER_WEBHOOK.name, {
      data: { deliveryId: id!, attempt: 2 },
    })
    expect(deferred.map((j) => j.startAfter.getTime()).sort()).toContain(hour.getTime())
    expect((await relay.attemptContext(id!))!.attempts).toBe(1)
  })
})

describe('delivery log, ping and redelivery', () => {
  test('ping: none without a URL; with one, a pending delivery whose event the relay enqueues', async () => {
    const other = (await db().insert(accounts).values({ ingestKey: 'wh-nourl' }).returning())[0]!.id
    expect(await store.ping(other, now)).toBeNull()
    const ping = await store.ping(owner, now)
    expect(ping).toMatchObject({ event: 'ping', status: 'pending', attemptCount: 0, attempts: [] })
    expect(await store.getDelivery(owner, ping!.id)).toMatchObject({ id: ping!.id, event: 'ping' })
    await relay.dispatchEvents(100, now)
    expect((await jobsOf(ping!.id)).map((j) => j.data)).toEqual([{ deliveryId: ping!.id, attempt: 1 }])
  })

  test('redelivery: a new chain on the same id, history kept, refused while pending', async () => {
    const [id] = await append(owner, 1)
    await relay.dispatchEvents(100, now)
    expect(await store.redeliver(owner, id!, now)).toEqual({ kind: 'in_progress' })
    expect(await store.redeliver(stranger, id!, now)).toEqual({ kind: 'not_found' })
    expect(await store.redeliver(owner, 'not-a-uuid', now)).toEqual({ kind: 'not_found' })
    await relay.recordAttempt({
      deliveryId: id!,
      attempt: 1,
      at: now,
      verdict: 'give_up',
      outcome: 'HTTP 404',
      status: 404,
      latencyMs: 3,
      responseSnippet: null,
      url: 'https://hooks.example/two',
      step: { state: 'failed' },
      firstFailureAt: now,
      now,
    })
    // The outbox row may be gone (the delivery keeps its own copy of the event).
    await db().delete(events).where(eq(events.id, id!))
    const again = await store.redeliver(owner, id!, now)
    expect(again).toMatchObject({
      kind: 'ok',
      delivery: { id, status: 'pending', attemptCount: 0, firstFailureAt: null },
    })
    if (again.kind !== 'ok') throw new Error('redelivery refused')
    expect(again.delivery.attempts.map((a) => a.outcome)).toEqual(['HTTP 404'])
    expect(await relay.dispatchEvents(100, now)).toEqual({ events: 1, deliveries: 1 })
    const jobs = await jobsOf(id!)
    expect(jobs.filter((j) => j.data.attempt === 1)).toHaveLength(2)
    expect(await store.redeliver(owner, id!, now)).toEqual({ kind: 'in_progress' })
  })

  test('the log filters by status, pages, and shows only the account’s own deliveries', async () => {
    const all = await store.listDeliveries(owner, {}, { page: 1, perPage: 100 })
    const failed = await store.listDeliveries(owner, { status: 'failed' }, { page: 1, perPage: 100 })
    expect(all.total).toBeGreaterThan(60)
    expect(failed.items.every((d) => d.status === 'failed')).toBe(true)
    const page2 = await store.listDeliveries(owner, {}, { page: 2, perPage: 5 })
    expect(page2.items).toHaveLength(5)
    expect(page2.total).toBe(all.total)
    expect(await store.listDeliveries(stranger, {}, { page: 1, perPage: 10 })).toEqual({
      items: [],
      total: 0,
    })
    const someone = all.items[0]!.id
    expect(await store.getDelivery(stranger, someone)).toBeNull()
    expect(await store.getDelivery(owner, 'nope')).toBeNull()
  })
})
