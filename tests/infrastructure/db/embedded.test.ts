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
    await expect(openEmbedded({ dataDir: dir, serveSocket: false })).rejects.toBeInstanceOf(DataDirBusyError)
    // The service waits for such a holder (a CLI command), then gives up the same way.
    await expect(openEmbedded({ dataDir: dir, serveSocket: true, lockWaitMs: 500 })).rejects.toBeInstanceOf(
      DataDirBusyError,
    )
  } finally {
    await holder.close()
  }
}, 60_000)

test('the service waits for a CLI command holding the directory, and opens it once that is done', async () => {
  const holder = await openEmbedded({ dataDir: dir, serveSocket: false })
  const opening = openEmbedded({ dataDir: dir, serveSocket: true, lockWaitMs: 20_000 })
  await Bun.sleep(500)
  await holder.close()
  const service = await opening
  expect(service.kind).toBe('pglite')
  await service.close()
}, 60_000)

test('a lock left by a dead process is taken over', async () => {
  writeFileSync(join(dir, 'dmarcwatch.lock'), JSON.stringify({ pid: 2 ** 22 + 17, nonce: 'x', socket: null }))
  const database = await openEmbedded({ dataDir: dir, serveSocket: false })
  expect(database.kind).toBe('pglite')
  expect(JSON.parse(readFileSync(join(dir, 'dmarcwatch.lock'), 'utf8')).pid).toBe(process.pid)
  await database.close()
}, 60_000)

test('socket clients stay correct while the owner keeps querying: statements and transactions are atomic', async () => {
  const dir2 = mkdtempSync(join(tmpdir(), 'dw-embedded-busy-'))
  const owner = await openEmbedded({ dataDir: dir2, serveSocket: true })
  if (owner.kind !== 'pglite') throw new Error('expected the embedded owner')
  await owner.pglite.exec('create table t (n int, label text)')
  let stop = false
  // The service's own work: parameterized queries in a tight loop, as pg-boss polling does.
  const busy = (async () => {
    let i = 0
    while (!stop) {
      await owner.pglite.query('select $1::int + 1 as n, $2::text as x', [i++, 'noise'])
      // Yield to I/O between queries, as a service's timers and requests do.
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  const client = await openEmbedded({ dataDir: dir2, serveSocket: false })
  if (client.kind !== 'postgres') throw new Error('expected a socket client')
  const sqlClient = client.client
  for (let i = 0; i < 100; i++) await sqlClient`insert into t values (${i}, ${`row ${i}`})`
  // A transaction on the socket sees only its own statements, and rolls back whole.
  await sqlClient
    .begin(async (tx) => {
      await tx`insert into t values (${1000}, ${'in tx'})`
      await Bun.sleep(20)
      await tx`insert into t values (${1001}, ${'in tx'})`
      throw new Error('roll back')
    })
    .catch(() => {})
  stop = true
  await busy
  const rows = await sqlClient`select count(*)::int as n, sum(n)::int as total from t`
  expect(rows[0]).toEqual({ n: 100, total: 4950 })
  await client.close()
  await owner.close()
  rmSync(dir2, { recursive: true, force: true })
}, 60_000)
