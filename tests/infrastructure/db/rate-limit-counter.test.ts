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
