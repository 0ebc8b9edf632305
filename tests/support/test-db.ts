import { existsSync, renameSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { type Database, openPostgres } from '../../infrastructure/db/database.ts'
import { migrate } from '../../infrastructure/db/migrate.ts'
import { wrapPglite } from '../../infrastructure/db/pglite-database.ts'
import { postgresClient } from '../../infrastructure/db/postgres-url.ts'

// Each test file gets a database of its own, so files can run in parallel:
// - DW_TEST_DB=postgres (default): a fresh database on the PostgreSQL server at TEST_DATABASE_URL
//   (default postgres://postgres@127.0.0.1:5432/test), dropped afterwards.
// - DW_TEST_DB=pglite: an in-memory PGlite loaded from a migrated template (initdb in WASM costs
//   seconds; loading a dump of it costs one).
// A test that needs PostgreSQL fails, never skips, when the server is unreachable.

export type Backend = 'postgres' | 'pglite'

export const backend: Backend = process.env.DW_TEST_DB === 'pglite' ? 'pglite' : 'postgres'
export const adminUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'

export interface TestDatabase {
  database: Database
  /** A connection URL for other processes (PostgreSQL backend only). */
  url: string | null
  drop(): Promise<void>
}

function databaseUrl(name: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export async function createPostgresDatabase(): Promise<{
  name: string
  url: string
  drop(): Promise<void>
}> {
  // TEST_DATABASE_URL may name the server's Unix socket, as DATABASE_URL may (postgres-url.ts).
  const admin = postgresClient(adminUrl, { max: 1, onnotice: () => {} })
  const name = `dw_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  try {
    await admin.unsafe(`create database "${name}"`)
  } catch (error) {
    await admin.end()
    throw new Error(`PostgreSQL at ${adminUrl} is required for this test: ${(error as Error).message}`)
  }
  return {
    name,
    url: databaseUrl(name),
    async drop() {
      await admin.unsafe(`drop database if exists "${name}" with (force)`)
      await admin.end()
    },
  }
}

/** Builds (once per migration set) the migrated PGlite template; returns its path. */
export async function preparePgliteTemplate(): Promise<string> {
  const journal = await Bun.file(
    new URL('../../infrastructure/db/migrations/meta/_journal.json', import.meta.url),
  ).text()
  // The month too: the template holds the monthly partitions of aggregate_records made at migration.
  const key = `${Bun.hash(journal).toString(36)}-${new Date().toISOString().slice(0, 7)}`
  const path = join(tmpdir(), `dmarcwatch-pglite-template-${key}.tar`)
  if (!existsSync(path)) {
    const pglite = await PGlite.create()
    await migrate(wrapPglite(pglite, async () => {}))
    const dump = await pglite.dumpDataDir('none')
    await pglite.close()
    // Written then renamed, so a parallel test worker never reads half a template.
    const partial = `${path}.${process.pid}.partial`
    await Bun.write(partial, dump)
    renameSync(partial, path)
  }
  return path
}

async function templateDump(): Promise<Blob> {
  return new Blob([await Bun.file(await preparePgliteTemplate()).arrayBuffer()])
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const pglite = await PGlite.create({ loadDataDir: await templateDump() })
    const database = wrapPglite(pglite, () => pglite.close())
    await migrate(database)
    return { database, url: null, drop: () => database.close() }
  }
  const created = await createPostgresDatabase()
  const database = openPostgres(created.url, { max: 5 })
  await migrate(database)
  return {
    database,
    url: created.url,
    async drop() {
      await database.close()
      await created.drop()
    },
  }
}
