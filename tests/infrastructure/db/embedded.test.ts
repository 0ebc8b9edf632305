import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { DataDirBusyError, openEmbedded } from '../../../infrastructure/db/embedded.ts'
import { migrate } from '../../../infrastructure/db/migrate.ts'

// The embedded database is opened by one process only; everyone else goes through its socket.

const dir = mkdtempSync(join(tmpdir(), 'dw-embedded-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('a second opener reaches the same database through the owner’s socket, never opening it twice', async () => {
  const owner = await openEmbedded({ dataDir: dir, serveSocket: true })
  expect(owner.kind).toBe('pglite')
  await migrate(owner)
  await owner.db.execute(sql`create table probe (v text)`)
  await owner.db.execute(sql`insert into probe values ('written by the owner')`)

  const client = await openEmbedded({ dataDir: dir, serveSocket: false })
  expect(client.kind).toBe('postgres')
  const rows = rowsOf<{ v: string }>(await client.db.execute(sql`select v from probe`))
  expect(rows).toEqual([{ v: 'written by the owner' }])
  // Migrations through the socket are a no-op, not a second migrator on the files.
  await migrate(client)
  await client.close()
  await owner.close()

  // Once the owner is gone the directory opens directly again.
  const reopened = await openEmbedded({ dataDir: dir, serveSocket: false })
  expect(reopened.kind).toBe('pglite')
  expect(rowsOf<{ v: string }>(await reopened.db.execute(sql`select v from probe`))).toHaveLength(1)
  await reopened.close()
}, 60_000)

test('a holder without a socket makes others fail clearly instead of sharing the files', async () => {
  const holder = await openEmbedded({ dataDir: dir, serveSocket: false })
  try {
    await expect(openEmbedded({ dataDir: dir, serveSocket: true })).rejects.toBeInstanceOf(DataDirBusyError)
  } finally {
    await holder.close()
  }
}, 60_000)

test('a lock left by a dead process is taken over', async () => {
  writeFileSync(join(dir, 'dmarcwatch.lock'), JSON.stringify({ pid: 2 ** 22 + 17, nonce: 'x', socket: null }))
  const database = await openEmbedded({ dataDir: dir, serveSocket: false })
  expect(database.kind).toBe('pglite')
  expect(JSON.parse(readFileSync(join(dir, 'dmarcwatch.lock'), 'utf8')).pid).toBe(process.pid)
  await database.close()
}, 60_000)
