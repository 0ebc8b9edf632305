import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { PROCESS_MESSAGE } from '../../../infrastructure/queue/catalogue.ts'
import { pgIngestMessageStore } from '../../../infrastructure/repositories/pg-ingest-message-store.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// The worker marks a batch's processed messages in one statement (src/jobs/ingest.ts): each gets
// its own outcome, other messages are untouched, quarantine fields are cleared (PostgreSQL and
// PGlite).

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({}, { queue: true })
}, 60_000)
afterAll(() => t.close())

async function pendingMessage(accountId: string, n: number): Promise<string> {
  const rows = rowsOf<{ id: string }>(
    await t.db.database.db.execute(sql`insert into ingest_messages (account_id, source, raw, size, sha256, received_at, status,
        quarantine_code, quarantine_reason)
      values (${accountId}, 'http', ${new Uint8Array([n])}, 1, ${`hash-${n}-${Math.random()}`}, now(), 'pending', 'x', 'retried')
      returning id`),
  )
  return rows[0]!.id
}

test('a batch is marked processed in one statement, each message with its own outcome', async () => {
  const { accountId } = await t.account()
  const store = pgIngestMessageStore(t.db.database.db, null)
  const [a, b, untouched] = [
    await pendingMessage(accountId, 1),
    await pendingMessage(accountId, 2),
    await pendingMessage(accountId, 3),
  ]
  await store.markProcessedMany([], new Date())
  const at = new Date('2026-11-26T12:00:00Z')
  await store.markProcessedMany(
    [
      { id: a!, outcome: [{ status: 'stored', kind: 'aggregate', note: 'quote " and \\ backslash' }] },
      { id: b!, outcome: [{ status: 'duplicate', kind: 'aggregate' }] },
    ],
    at,
  )
  const rows = rowsOf<{
    id: string
    status: string
    outcome: unknown
    processed_at: unknown
    quarantine_code: string | null
  }>(
    await t.db.database.db.execute(
      sql`select id, status, outcome, processed_at, quarantine_code from ingest_messages where account_id = ${accountId}`,
    ),
  )
  const byId = new Map(rows.map((r) => [r.id, r]))
  expect(byId.get(a!)).toMatchObject({
    status: 'processed',
    quarantine_code: null,
    outcome: [{ status: 'stored', kind: 'aggregate', note: 'quote " and \\ backslash' }],
  })
  expect(new Date(String(byId.get(a!)!.processed_at)).toISOString()).toBe(at.toISOString())
  expect(byId.get(b!)).toMatchObject({
    status: 'processed',
    outcome: [{ status: 'duplicate', kind: 'aggregate' }],
  })
  expect(byId.get(untouched!)).toMatchObject({ status: 'pending', quarantine_code: 'x' })
})

// A small message and its job are written by one statement (the intake's, issue #20): both or neither.
const body = (bytes: Uint8Array, sha256: string) => ({
  size: bytes.byteLength,
  sha256,
  async *pieces() {
    yield bytes
  },
})
const jobsOf = (messageId: string) => t.runtime.boss!.findJobs(PROCESS_MESSAGE.name, { data: { messageId } })
const allJobs = async () => (await t.runtime.boss!.findJobs(PROCESS_MESSAGE.name)).length

test('a small message is stored with its job, the job deferred when the caller processes it', async () => {
  const { accountId } = await t.account()
  const store = pgIngestMessageStore(t.db.database.db, t.runtime.boss)
  const bytes = new TextEncoder().encode('Subject: x\r\n\r\nhello')
  const fields = { accountId, source: 'http' as const, recipient: null, receivedAt: new Date() }
  const now = await store.insertAndEnqueue({
    ...fields,
    body: body(bytes, `n-${Math.random()}`),
    deferJob: false,
  })
  const later = await store.insertAndEnqueue({
    ...fields,
    body: body(bytes, `l-${Math.random()}`),
    deferJob: true,
  })
  expect((await store.load(now))?.raw).toEqual(bytes)
  const [due] = await jobsOf(now)
  const [deferred] = await jobsOf(later)
  expect(due?.state).toBe('created')
  expect(due?.retryLimit).toBe(PROCESS_MESSAGE.options.retryLimit!)
  expect(deferred!.startAfter.getTime() - due!.startAfter.getTime()).toBeGreaterThan(14 * 60 * 1000)
})

test('a message that cannot be stored leaves no job behind', async () => {
  const store = pgIngestMessageStore(t.db.database.db, t.runtime.boss)
  const missing = '00000000-0000-4000-8000-000000000000'
  const before = await allJobs()
  const stored = store.insertAndEnqueue({
    accountId: missing,
    source: 'http',
    recipient: null,
    receivedAt: new Date(),
    body: body(new Uint8Array([1, 2, 3]), `x-${Math.random()}`),
    deferJob: false,
  })
  await expect(stored).rejects.toThrow()
  const after = await allJobs()
  expect(after).toBe(before)
})
