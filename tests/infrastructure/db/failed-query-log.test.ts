import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { errorFields } from '../../../domain/shared/logger.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// A statement that fails tells, in a log line or the CLI's one line, the database's reason and the
// statement's start, never the statement's parameters: they may be a stored mail's bytes, which
// Drizzle's error message carries whole (a 400 KB message printed 1.36 MB as decimals, and the
// database's own reason appeared nowhere in it).

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

test('a failed statement is logged by its driver’s reason, without its parameters', async () => {
  const secret = 'x'.repeat(100_000)
  let thrown: unknown
  try {
    await db.database.db.execute(sql`select ${secret}::text, 1 / ${0}::int as boom`)
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(Error)
  const fields = errorFields(thrown)
  expect(String(fields.error)).toMatch(/division by zero/)
  expect(String(fields.query)).toStartWith('select $1::text')
  expect(JSON.stringify(fields)).not.toContain('xxxxxxxxxx')
  expect(JSON.stringify(fields).length).toBeLessThan(20_000)
})

test('any other error’s message is bounded', () => {
  const fields = errorFields(new Error('y'.repeat(1_000_000)))
  expect(String(fields.error).length).toBeLessThan(5_000)
})
