import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import { secretBox } from '../../../infrastructure/crypto/secret-box.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { createQueues } from '../../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../../infrastructure/queue/pg-boss.ts'
import { pruneDeliveryLogs } from '../../../infrastructure/repositories/pg-delivery-log-retention.ts'
import { pgWebhookRelay } from '../../../infrastructure/repositories/pg-webhook-relay.ts'
import { pgWebhookStore } from '../../../infrastructure/repositories/pg-webhook-store.ts'
import { backend, createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The nightly retention of the outbox and the delivery logs (docs/webhooks.md, "Retention"), on
// PostgreSQL and PGlite: old finished rows go in batches, pending and recent ones stay, a failure
// the alert still counts stays, and a chat delivery outlives every way its event can come back.

let tdb: TestDatabase
let boss: PgBoss
const db = () => tdb.database.db

beforeAll(async () => {
  tdb = await createTestDatabase()
  boss = await startBoss(tdb.database, { background: false })
  await createQueues(boss)
}, 60_000)
afterAll(async () => {
  await boss.stop({ graceful: false })
  await tdb.drop()
})

const exec = (query: ReturnType<typeof sql>) => db().execute(query)
const ids = async (query: ReturnType<typeof sql>) =>
  rowsOf<{ id: string }>(await exec(query))
    .map((r) => String(r.id))
    .sort()
const ago = (days: number) => sql`now() - make_interval(days => ${days})`

async function account(key: string): Promise<string> {
  const [row] = await db().insert(accounts).values({ ingestKey: key }).returning({ id: accounts.id })
  return row!.id
}

/** An event `days` old, dispatched `dispatched` days ago (null: undispatched). */
async function event(accountId: string, days: number, dispatched: number | null): Promise<string> {
  const at = dispatched === null ? sql`null` : ago(dispatched)
  const rows = rowsOf<{ id: string }>(
    await exec(sql`insert into events (account_id, type, data, occurred_at, dispatched_at)
      values (${accountId}, 'alert.created', '{"severity":"critical"}', ${ago(days)}, ${at}) returning id`),
  )
  return String(rows[0]!.id)
}

async function delivery(accountId: string, id: string, status: string, days: number, finished = days) {
  await exec(sql`insert into webhook_deliveries (id, account_id, event, data, url, status, created_at, updated_at)
    values (${id}, ${accountId}, 'alert.created', '{}', 'https://hooks.example/x', ${status}, ${ago(days)}, ${ago(finished)})`)
}

async function chat(
  accountId: string,
  eventId: string | null,
  status: string,
  days: number,
  channel = 'slack',
) {
  const rows = rowsOf<{ id: string }>(
    await exec(sql`insert into notification_deliveries (account_id, channel, event, event_id, data, status, created_at, updated_at)
      values (${accountId}, ${channel}, ${eventId === null ? 'test' : 'alert.created'}, ${eventId}, '{}', ${status},
        ${ago(days)}, ${ago(days)}) returning id`),
  )
  return String(rows[0]!.id)
}

test('dispatched events go after 30 days, in batches; undispatched and recent ones stay', async () => {
  const a = await account('ev-a')
  const b = await account('ev-b')
  for (let i = 0; i < 4; i++) await event(a, 40, 40)
  for (let i = 0; i < 3; i++) await event(b, 40, 40)
  const kept = [
    await event(a, 40, null), // the relay has not taken it yet
    await event(a, 2, 2),
    await event(b, 40, 3), // put back by a redelivery three days ago
  ]
  // A batch of 2 over 7 due events in two accounts: four full batches, then a short one.
  const pruned = await pruneDeliveryLogs(db(), { batch: 2 })
  expect(pruned.events).toBe(7)
  expect(await ids(sql`select id from events where account_id in (${a}, ${b})`)).toEqual(kept.sort())
})

test('finished deliveries go with their attempts; pending ones and what the failing alert reads stay', async () => {
  const [a, b, c] = [await account('wh-a'), await account('wh-b'), await account('wh-c')]
  const uuids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID())
  const doomed = uuids(4)
  for (const id of doomed.slice(0, 3)) await delivery(a, id, 'delivered', 60, 59)
  await delivery(a, doomed[3]!, 'failed', 70, 69) // deliveries got through after it
  for (const id of doomed)
    await exec(sql`insert into webhook_attempts (delivery_id, attempt, at, verdict, outcome, latency_ms)
      values (${id}, 1, now() - interval '59 days', 'delivered', 'HTTP 200', 5)`)
  const kept = uuids(3)
  await delivery(a, kept[0]!, 'pending', 60) // a chain still running (or stuck): never pruned
  await delivery(a, kept[1]!, 'delivered', 60, 3) // redelivered three days ago
  await delivery(a, kept[2]!, 'delivered', 5)
  const never = crypto.randomUUID()
  await delivery(b, never, 'failed', 90) // nothing ever got through: the alert counts it
  // c's last delivery that got through anchors the alert; the failure after it is counted, the one
  // before it is not.
  const [anchor, counted, superseded] = uuids(3)
  await delivery(c, anchor!, 'delivered', 60)
  await delivery(c, counted!, 'failed', 40)
  await delivery(c, superseded!, 'failed', 70)
  const pruned = await pruneDeliveryLogs(db(), { batch: 2 })
  expect(pruned.webhookDeliveries).toBe(5)
  expect(await ids(sql`select id from webhook_deliveries where account_id = ${a}`)).toEqual(kept.sort())
  expect(await ids(sql`select id from webhook_deliveries where account_id = ${b}`)).toEqual([never])
  expect(await ids(sql`select id from webhook_deliveries where account_id = ${c}`)).toEqual(
    [anchor!, counted!].sort(),
  )
  expect(await ids(sql`select id from webhook_attempts`)).toEqual([])
})

test('a chat delivery stays while its event can reach the relay again, and the newest per channel stays', async () => {
  const a = await account('chat-a')
  const gone = await event(a, 40, 40) // pruned with the outbox below, no webhook delivery
  const redeliverable = await event(a, 40, 40)
  await delivery(a, redeliverable, 'failed', 40) // the alert counts it: it stays, and so can come back
  const undispatched = await event(a, 40, null)
  const doomed = [await chat(a, gone, 'delivered', 40), await chat(a, null, 'failed', 40)]
  const kept = [
    await chat(a, redeliverable, 'delivered', 40),
    await chat(a, undispatched, 'failed', 40),
    await chat(a, null, 'pending', 40),
    await chat(a, null, 'delivered', 3),
    await chat(a, null, 'delivered', 50, 'teams'), // old, but the newest Teams delivery
  ]
  const pruned = await pruneDeliveryLogs(db())
  expect(pruned.chatDeliveries).toBe(doomed.length)
  expect(await ids(sql`select id from notification_deliveries where account_id = ${a}`)).toEqual(kept.sort())
})

test('a delivery whose event was pruned is redelivered, and its chat message is not sent twice', async () => {
  const a = await account('redeliver-a')
  const secrets = await secretBox(new Uint8Array(32).fill(7))
  const store = pgWebhookStore(db(), { secrets })
  const relay = pgWebhookRelay(db(), boss)
  await store.putUrl(a, 'https://hooks.example/a', `whsec_${'a'.repeat(43)}`, new Date())
  await exec(sql`insert into notification_settings (account_id, settings, slack_url_sealed, updated_at)
    values (${a}, '{}', 'sealed', now())`)
  const id = await event(a, 0, null)
  // (The earlier tests' undispatched events go too; their accounts have no URL.)
  expect((await relay.dispatchEvents(100, new Date())).deliveries).toBe(1)
  const chatOf = sql`select id from notification_deliveries where event_id = ${id}`
  const [first] = await ids(chatOf)
  // All of it finished 40 days ago, and a newer Slack message since; the delivery failed.
  await exec(sql`update events set occurred_at = ${ago(40)}, dispatched_at = ${ago(40)} where id = ${id}`)
  await exec(
    sql`update webhook_deliveries set status = 'failed', created_at = ${ago(40)}, updated_at = ${ago(40)} where id = ${id}`,
  )
  await exec(
    sql`update notification_deliveries set status = 'delivered', created_at = ${ago(40)}, updated_at = ${ago(40)} where id = ${first}`,
  )
  await chat(a, null, 'delivered', 1)
  await pruneDeliveryLogs(db())
  // The event went; the failed delivery stays (the alert counts it), and so does its chat message.
  expect(await ids(sql`select id from events where id = ${id}`)).toEqual([])
  expect(await ids(sql`select id from webhook_deliveries where id = ${id}`)).toEqual([id])
  expect(await ids(chatOf)).toEqual([first!])

  const again = await store.redeliver(a, id, new Date())
  expect(again).toMatchObject({ kind: 'ok', delivery: { id, status: 'pending' } })
  expect(await relay.dispatchEvents(100, new Date())).toEqual({ events: 1, deliveries: 1 })
  expect(await ids(chatOf)).toEqual([first!])
})

// PGlite has one connection: transactions cannot interleave there.
test.if(backend === 'postgres')(
  'a redelivery racing the prune of its delivery answers not found',
  async () => {
    const a = await account('race-a')
    const store = pgWebhookStore(db(), { secrets: await secretBox(new Uint8Array(32).fill(7)) })
    await store.putUrl(a, 'https://hooks.example/a', `whsec_${'a'.repeat(43)}`, new Date())
    const id = crypto.randomUUID()
    await delivery(a, id, 'delivered', 40)
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let locked = () => {}
    const deleting = new Promise<void>((resolve) => {
      locked = resolve
    })
    // The prune's delete, holding the row until released.
    const prune = db().transaction(async (tx) => {
      await tx.execute(sql`delete from webhook_deliveries where id = ${id}`)
      locked()
      await held
    })
    await deleting
    const redelivery = store.redeliver(a, id, new Date())
    await Bun.sleep(100)
    release()
    await prune
    expect(await redelivery).toEqual({ kind: 'not_found' })
  },
)
