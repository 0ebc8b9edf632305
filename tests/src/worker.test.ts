import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { PgBoss } from 'pg-boss'
import { POLL_MAILBOXES, QUEUES } from '../../infrastructure/queue/catalogue.ts'
import { startWorkers } from '../../src/worker.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'

// The worker registers one handler per queue of the catalogue (infrastructure/queue/catalogue.ts),
// on a real pg-boss: every queue exists with its policy, every cron queue is scheduled with the
// catalogue's cron, and every queue has a worker. Mailbox polling is registered only with mailboxes.

let t: TestApp
let boss: PgBoss

beforeAll(async () => {
  t = await startTestApp({}, { queue: true })
  boss = t.runtime.boss!
  await startWorkers(boss, t.runtime)
}, 60_000)
afterAll(() => t.close())

test('queue names are unique', () => {
  const names = QUEUES.map((q) => q.name)
  expect(new Set(names).size).toBe(names.length)
})

test('every queue of the catalogue exists with its policy', async () => {
  const queues = new Map((await boss.getQueues()).map((q) => [q.name, q]))
  for (const spec of QUEUES) {
    expect(queues.get(spec.name)?.policy ?? null).toBe(spec.options.policy ?? 'standard')
    expect(queues.get(spec.name)?.retryLimit).toBe(spec.options.retryLimit ?? 2)
  }
})

test('the worker schedules the cron queues and works on every queue', async () => {
  const withoutMailboxes = QUEUES.filter((q) => q !== POLL_MAILBOXES)
  const schedules = await boss.getSchedules()
  const crons = withoutMailboxes.flatMap((q) => (q.cron === undefined ? [] : [[q.name, q.cron] as const]))
  expect(Object.fromEntries(schedules.map((s) => [s.name, s.cron]))).toEqual(Object.fromEntries(crons))
  // localConcurrency starts several workers on one queue.
  const working = new Set(boss.getWipData().map((w) => w.name))
  expect([...working].toSorted()).toEqual(withoutMailboxes.map((q) => q.name).toSorted())
})
