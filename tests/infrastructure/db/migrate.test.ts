import { afterAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { openPostgres, rowsOf } from '../../../infrastructure/db/database.ts'
import { migrate, migrationsApplied } from '../../../infrastructure/db/migrate.ts'
import { createPostgresDatabase } from '../../support/test-db.ts'

const created = await createPostgresDatabase()
afterAll(() => created.drop())

test('several processes migrating one PostgreSQL at once apply each migration exactly once', async () => {
  const databases = Array.from({ length: 4 }, () => openPostgres(created.url, { max: 1 }))
  try {
    expect(await migrationsApplied(databases[0]!)).toBe(false)
    await Promise.all(databases.map((database) => migrate(database)))
    const rows = rowsOf<{ n: number }>(
      await databases[0]!.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`),
    )
    const journal = await Bun.file('infrastructure/db/migrations/meta/_journal.json').json()
    expect(rows[0]!.n).toBe(journal.entries.length)
    expect(await migrationsApplied(databases[0]!)).toBe(true)
    // Idempotent: a later start finds nothing to do.
    await migrate(databases[1]!)
    expect(await migrationsApplied(databases[1]!)).toBe(true)
  } finally {
    await Promise.all(databases.map((database) => database.close()))
  }
})
