import { expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { openPostgres, rowsOf } from '../../../infrastructure/db/database.ts'
import { migrate } from '../../../infrastructure/db/migrate.ts'
import { postgresJsTarget } from '../../../infrastructure/db/postgres-url.ts'
import { startBoss } from '../../../infrastructure/queue/pg-boss.ts'
import { adminUrl, backend, createPostgresDatabase } from '../../support/test-db.ts'

// DATABASE_URL in libpq's socket forms (infrastructure/db/postgres-url.ts; docs/operations.md).

test('a socket directory in the host or in the host parameter becomes the path; other URLs pass as they are', () => {
  expect(postgresJsTarget('postgresql://dw:secret@/dmarcwatch?host=/var/run/postgresql')).toEqual({
    url: 'postgresql://dw:secret@localhost/dmarcwatch',
    path: '/var/run/postgresql/.s.PGSQL.5432',
  })
  expect(postgresJsTarget('postgresql:///dmarcwatch?host=/tmp/&port=5433&sslmode=disable')).toEqual({
    url: 'postgresql://localhost:5433/dmarcwatch?sslmode=disable',
    path: '/tmp/.s.PGSQL.5433',
  })
  expect(postgresJsTarget('postgres://dw@%2Fvar%2Frun%2Fpostgresql:5434/db')).toEqual({
    url: 'postgres://dw@localhost:5434/db',
    path: '/var/run/postgresql/.s.PGSQL.5434',
  })
  for (const url of [
    'postgres://dw:p%40ss@db.example:5432/dmarcwatch?sslmode=require',
    'postgresql://dw@[::1]:5432/dmarcwatch',
    'postgresql://h1.example,h2.example/dmarcwatch',
  ])
    expect(postgresJsTarget(url)).toEqual({ url })
  // libpq's host and port parameters for TCP override the URL's host and port.
  expect(
    postgresJsTarget('postgresql://dw@127.0.0.1/dmarcwatch?host=db.example&port=6432&sslmode=require'),
  ).toEqual({
    url: 'postgresql://dw@db.example:6432/dmarcwatch?sslmode=require',
  })
  expect(postgresJsTarget('postgresql:///dmarcwatch?host=::1')).toEqual({
    url: 'postgresql://[::1]/dmarcwatch',
  })
})

// Skipped on PGlite (reason): the socket is the PostgreSQL server's; PGlite has none.
test.if(backend === 'postgres')(
  "the service's clients, its migrations and pg-boss connect through PostgreSQL's Unix socket",
  async () => {
    const admin = openPostgres(adminUrl, { max: 1 })
    const [setting] = rowsOf<{ unix_socket_directories: string }>(
      await admin.db.execute(sql`show unix_socket_directories`),
    )
    await admin.close()
    const directory = String(setting?.unix_socket_directories).split(',')[0]!.trim()
    expect(directory.startsWith('/')).toBe(true)
    const created = await createPostgresDatabase()
    const port = new URL(adminUrl).port || '5432'
    try {
      for (const url of [
        `postgresql://postgres@/${created.name}?host=${directory}&port=${port}`,
        `postgresql://postgres@${encodeURIComponent(directory)}:${port}/${created.name}`,
      ]) {
        const database = openPostgres(url, { max: 2 })
        try {
          await migrate(database)
          // A connection over a Unix-domain socket has no server address.
          for (const db of [database.db, database.countersDb]) {
            const [row] = rowsOf<{ local: boolean }>(
              await db.execute(sql`select inet_server_addr() is null as local`),
            )
            expect(row?.local).toBe(true)
          }
          const boss = await startBoss(database, { background: false })
          try {
            await boss.createQueue('socket-check')
            expect(await boss.send('socket-check', { ok: true })).toBeString()
          } finally {
            await boss.stop({ graceful: false })
          }
        } finally {
          await database.close()
        }
      }
    } finally {
      await created.drop()
    }
  },
  60_000,
)
