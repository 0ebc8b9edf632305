import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  deleteExpiredCounters,
  pgRateLimitCounter,
} from '../../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(() => db.drop())

test('hits count atomically per key and window; cleanup deletes only ended windows', async () => {
  const counter = pgRateLimitCounter(db.database.db)
  const old = { start: 1000, reset: 1060 }
  const current = { start: 2000, reset: 2060 }
  const hits = await Promise.all(Array.from({ length: 10 }, () => counter.hit('api:t1', current)))
  expect(hits.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  expect(await counter.hit('api:t2', current)).toBe(1)
  expect(await counter.hit('api:t1', old)).toBe(1)
  expect(await deleteExpiredCounters(db.database.db, 2000)).toBe(1)
  expect(await counter.hit('api:t1', current)).toBe(11)
  expect(await counter.hit('api:t1', old)).toBe(1)
})

test('concurrent hits of one key share upserts yet each gets its own place; two processes stay exact', async () => {
  // Two counters, as two API processes would have: each coalesces its own concurrent hits, the
  // database adds the batches atomically, so the counts handed out are exactly 1..N across both.
  const a = pgRateLimitCounter(db.database.db)
  const b = pgRateLimitCounter(db.database.countersDb)
  const window = { start: 3000, reset: 3060 }
  const hits = await Promise.all(
    Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).hit('api:busy', window)),
  )
  expect(hits.sort((x, y) => x - y)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1))
  // The same key in another window is another counter, even while the first is busy.
  const [next, again] = await Promise.all([
    a.hit('api:busy', { start: 3060, reset: 3120 }),
    a.hit('api:busy', window),
  ])
  expect(next).toBe(1)
  expect(again).toBe(301)
})
