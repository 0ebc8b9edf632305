import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { jsonLogger } from '../../infrastructure/logging/json-logger.ts'
import { PROCESS_MESSAGE } from '../../infrastructure/queue/catalogue.ts'
import { registerJobs } from '../../infrastructure/queue/handlers.ts'
import { localWorkerWake } from '../../infrastructure/queue/wake.ts'
import { ingestJobDeps, intake, localIngestWake } from '../../src/compose/ingest.ts'
import { type App, buildApp, stores } from '../../src/compose.ts'
import { ingestJobs } from '../../src/jobs/ingest.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Waking the local ingest worker (docs/ingestion.md, "Waking the local worker"): the worker here
// polls only once a minute, so a message processed within seconds was fetched because intake woke
// it, not because a poll came round.

const POLL_SECONDS = 60
let t: TestApp
let owner: TestAccount
let waking: App
const raw = await Bun.file('tests/fixtures/dmarc-aggregate/mox/google.eml').text()
let sequence = 0
const db = () => t.db.database.db

async function post(app: App): Promise<string> {
  const response = await app.handle(
    new Request('http://localhost/api/v1/ingest/messages', {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${owner.token}` },
      body: `X-Wake-Sequence: ${sequence++}\r\n${raw}`,
    }),
  )
  expect(response.status).toBe(202)
  return ((await response.json()) as { data: { id: string } }).data.id
}

const statusOf = async (id: string) =>
  rowsOf<{ status: string }>(await db().execute(sql`select status from ingest_messages where id = ${id}`))[0]
    ?.status

async function processedWithin(ids: string[], ms: number): Promise<boolean> {
  const deadline = performance.now() + ms
  while (performance.now() < deadline) {
    const statuses = await Promise.all(ids.map(statusOf))
    if (statuses.every((s) => s === 'processed')) return true
    await Bun.sleep(20)
  }
  return false
}

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '10000' }, { queue: true })
  const boss = t.runtime.boss!
  // The worker of src/worker.ts for the ingest queue, but polling once a minute.
  const { messages } = intake(t.runtime)
  const jobs = ingestJobs(
    ingestJobDeps(t.runtime, { messages, forensicTls: stores(t.db.database, boss).forensicTls }),
  ).map((job) =>
    job.queue.name === PROCESS_MESSAGE.name
      ? { ...job, work: { ...job.work, pollingIntervalSeconds: POLL_SECONDS } }
      : job,
  )
  await registerJobs(boss, jobs)
  // Both workers (localConcurrency 2) have made their first fetch and wait out their poll.
  await Bun.sleep(500)
  waking = buildApp({ ...t.runtime, wakeIngest: localIngestWake(boss, t.runtime.logger) })
  owner = await t.account()
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'ueber.net' } })
  await db().execute(sql`update domains set verified_at = now() where name = 'ueber.net'`)
}, 60_000)
afterAll(() => t.close())

test('without a wake a message waits for the poll; an accepted message wakes the worker at once', async () => {
  // The intake without a wake (ROLE=api): the message waits for the poll, a minute away.
  const waiting = await post(t.app)
  expect(await processedWithin([waiting], 2_000)).toBe(false)
  expect(await statusOf(waiting)).toBe('pending')

  // The intake of ROLE=all: processed well before any poll, and the waiting one with it.
  const started = performance.now()
  const woken = await post(waking)
  expect(await processedWithin([woken, waiting], 10_000)).toBe(true)
  const seconds = (performance.now() - started) / 1000
  console.log(`woken: processed ${seconds.toFixed(2)} s after the post (poll: ${POLL_SECONDS} s)`)
  expect(seconds).toBeLessThan(10)
}, 30_000)

test('a burst of messages is fetched at once, and a second one right after it', async () => {
  const first = await Promise.all(Array.from({ length: 20 }, () => post(waking)))
  // Usually posted while the workers hold the first burst: then they fetch again when their batch
  // is done instead of waiting out the poll (infrastructure/queue/wake.ts).
  const second = await Promise.all(Array.from({ length: 5 }, () => post(waking)))
  expect(await processedWithin([...first, ...second], 15_000)).toBe(true)
}, 30_000)

test('a wake that fails is logged and the message stays accepted', async () => {
  const logs: string[] = []
  const broken = {
    getWipData() {
      throw new Error('no workers to read')
    },
  } as unknown as PgBoss
  const logger = jsonLogger('warn', (line) => logs.push(line))
  const app = buildApp({ ...t.runtime, wakeIngest: localIngestWake(broken, logger) })
  const id = await post(app)
  await Bun.sleep(50)
  expect(await statusOf(id)).toBe('pending')
  expect(logs.map((line) => JSON.parse(line))).toEqual([
    expect.objectContaining({
      level: 'warn',
      msg: 'waking the local worker failed; the job waits for its poll',
      queue: PROCESS_MESSAGE.name,
      error: 'no workers to read',
    }),
  ])
  // The next wake that works fetches it.
  await post(waking)
  expect(await processedWithin([id], 10_000)).toBe(true)
}, 30_000)

const turn = () => new Promise((resolve) => setImmediate(resolve))

function fakeBoss(wip: { id: string; name: string; state: string; count: number }[]) {
  const notified: string[] = []
  const boss = {
    getWipData: () => wip,
    notifyWorker: (id: string) => void notified.push(id),
  } as unknown as PgBoss
  return { boss, notified, wip }
}

test('one wake per event-loop turn, to an idle worker, or to every busy one', async () => {
  const fake = fakeBoss([
    { id: 'busy', name: PROCESS_MESSAGE.name, state: 'active', count: 3 },
    { id: 'other-queue', name: 'alerts.x', state: 'active', count: 0 },
    { id: 'idle', name: PROCESS_MESSAGE.name, state: 'active', count: 0 },
  ])
  const wake = localWorkerWake(
    fake.boss,
    PROCESS_MESSAGE,
    jsonLogger('silent', () => {}),
    0,
  )
  for (let i = 0; i < 100; i++) wake()
  expect(fake.notified).toEqual([])
  await turn()
  expect(fake.notified).toEqual(['idle'])
  fake.wip[2]!.count = 32
  wake()
  wake()
  await turn()
  expect(fake.notified).toEqual(['idle', 'busy', 'idle'])
})

test('after a wake, the jobs of the next gap share one wake at its end', async () => {
  const fake = fakeBoss([{ id: 'w', name: PROCESS_MESSAGE.name, state: 'active', count: 0 }])
  const wake = localWorkerWake(
    fake.boss,
    PROCESS_MESSAGE,
    jsonLogger('silent', () => {}),
    200,
  )
  const at: number[] = []
  const started = performance.now()
  const notify = fake.boss.notifyWorker.bind(fake.boss)
  fake.boss.notifyWorker = (id: string) => {
    at.push(performance.now() - started)
    notify(id)
  }
  wake()
  await turn()
  expect(at).toHaveLength(1)
  expect(at[0]!).toBeLessThan(50)
  for (let i = 0; i < 5; i++) {
    wake()
    await Bun.sleep(10)
  }
  expect(at).toHaveLength(1)
  await Bun.sleep(250)
  expect(at).toHaveLength(2)
  expect(at[1]!).toBeGreaterThanOrEqual(195)
  // Quiet since: the next job wakes at once again.
  await Bun.sleep(250)
  const quiet = performance.now() - started
  wake()
  await turn()
  expect(at).toHaveLength(3)
  expect(at[2]! - quiet).toBeLessThan(50)
})
