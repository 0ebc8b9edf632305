import { sql } from 'drizzle-orm'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import { type Database, rowsOf } from './database.ts'
import { postgresClient } from './postgres-url.ts'

const MIGRATIONS_FOLDER = new URL('./migrations', import.meta.url).pathname
// Any fixed 64-bit key; it serialises migration runs of every dmarcwatch process on one database.
const MIGRATION_LOCK_KEY = 0x646d6172

/**
 * Applies the committed drizzle-kit migrations. Idempotent (applied ones are recorded) and safe when
 * several processes start at once: on PostgreSQL a session advisory lock, held on one dedicated
 * connection, lets one process migrate while the others wait and then find nothing to do.
 * PGlite has a single process by construction (infrastructure/db/data-dir-lock.ts).
 */
export async function migrate(database: Database): Promise<void> {
  if (database.kind === 'pglite') {
    // Loaded only here: PGlite's driver is no part of a process on PostgreSQL.
    const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator')
    await migratePglite(database.db as never, { migrationsFolder: MIGRATIONS_FOLDER })
    return
  }
  const client = postgresClient(database.url, {
    max: 1,
    onnotice: () => {},
    ...(database.socketPath ? { path: database.socketPath, prepare: false } : {}),
  })
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`
    try {
      await migratePostgres(drizzlePostgres({ client }), { migrationsFolder: MIGRATIONS_FOLDER })
    } finally {
      await client`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`
    }
  } finally {
    await client.end({ timeout: 5 })
  }
}

/** Whether every committed migration is applied (readiness, docs/api.md). */
let expectedCount: Promise<number> | undefined

export async function migrationsApplied(database: Database): Promise<boolean> {
  expectedCount ??= Bun.file(`${MIGRATIONS_FOLDER}/meta/_journal.json`)
    .json()
    .then((journal: { entries: unknown[] }) => journal.entries.length)
  try {
    const result = await database.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)
    return rowsOf<{ n: number }>(result)[0]?.n === (await expectedCount)
  } catch {
    return false
  }
}
