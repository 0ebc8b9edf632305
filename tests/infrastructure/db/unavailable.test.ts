import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/postgres-js'
import { Elysia } from 'elysia'
import postgres from 'postgres'
import { isDatabaseUnavailable, isUniqueViolation } from '../../../infrastructure/db/errors.ts'
import { jsonLogger } from '../../../infrastructure/logging/json-logger.ts'
import { errorMapping } from '../../../plugins/errors.ts'
import { backend, createPostgresDatabase } from '../../support/test-db.ts'

// A database that cannot serve now is a 503 with Retry-After, not a 500 (infrastructure/db/errors.ts,
// docs/api.md "Errors"). The conditions are the PostgreSQL server's own, produced on the real
// server: a role over its connection limit, a port nothing listens on. PGlite runs in the process
// and has neither, so the file runs on the PostgreSQL pass only.

const onPostgres = test.if(backend === 'postgres')
const role = `dw_limited_${Math.random().toString(36).slice(2, 8)}`
let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let admin: postgres.Sql

beforeAll(async () => {
  if (backend !== 'postgres') return
  database = await createPostgresDatabase()
  admin = postgres(database.url, { max: 1, onnotice: () => {} })
  // No connection at all for this role: every attempt is refused with SQLSTATE 53300.
  await admin.unsafe(`create role ${role} login connection limit 0`)
})

afterAll(async () => {
  if (backend !== 'postgres') return
  await admin.unsafe(`drop role if exists ${role}`)
  await admin.end()
  await database.drop()
})

function asRole(): postgres.Sql {
  const url = new URL(database.url)
  url.username = role
  url.password = ''
  return postgres(url.toString(), { max: 1, connect_timeout: 5, onnotice: () => {} })
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('the statement succeeded')
}

onPostgres(
  'too many connections and a refused connection are "unavailable"; a constraint is not',
  async () => {
    const limited = asRole()
    const tooMany = await failure(() => limited`select 1`)
    await limited.end()
    expect((tooMany as { code?: string }).code).toBe('53300')
    expect(isDatabaseUnavailable(tooMany)).toBe(true)
    // Wrapped as Drizzle wraps driver errors (its `cause`).
    expect(isDatabaseUnavailable(new Error('Failed query', { cause: tooMany }))).toBe(true)

    // A port on loopback that nothing listens on: the socket's ECONNREFUSED.
    const nowhere = postgres('postgres://postgres@127.0.0.1:9/test', { max: 1, connect_timeout: 5 })
    const refused = await failure(() => nowhere`select 1`)
    await nowhere.end()
    expect(isDatabaseUnavailable(refused)).toBe(true)

    // The same code from another socket (a mail server's, say) is not the database's.
    const mailSocket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    })
    expect(isDatabaseUnavailable(mailSocket)).toBe(false)

    // A protocol violation (08P01) is a bug in the statement, not an outage: it stays a 500.
    const violation = await failure(() => admin.unsafe('select $1::int, $2::int', [1]))
    expect((violation as { code?: string }).code).toBe('08P01')
    expect(isDatabaseUnavailable(violation)).toBe(false)

    // A backend terminated under a running statement (57P01), through Drizzle's own error wrapper.
    const client = postgres(database.url, { max: 1, onnotice: () => {} })
    const db = drizzle({ client })
    const sleeping = failure(() => db.execute(sql`select pg_sleep(10)`))
    for (let i = 0; i < 50; i++) {
      const [row] = await admin<{ n: number }[]>`select count(pg_terminate_backend(pid))::int as n
        from pg_stat_activity where query = 'select pg_sleep(10)' and pid <> pg_backend_pid()`
      if (row!.n > 0) break
      await Bun.sleep(20)
    }
    const terminated = await sleeping
    // postgres.js's end() waits on the terminated connection: destroyed after a second instead.
    await client.end({ timeout: 1 })
    // Drizzle's wrapper, with the driver's error as its cause.
    expect((terminated as { cause?: unknown }).cause).toBeDefined()
    expect(isDatabaseUnavailable(terminated)).toBe(true)

    await admin`create table t (id int primary key)`
    await admin`insert into t values (1)`
    const duplicate = await failure(() => admin`insert into t values (1)`)
    expect(isUniqueViolation(duplicate)).toBe(true)
    expect(isDatabaseUnavailable(duplicate)).toBe(false)
    expect(isDatabaseUnavailable(new Error('plain'))).toBe(false)
  },
)

onPostgres(
  'through the error mapping: 503 service_unavailable with Retry-After, nothing of the error',
  async () => {
    const lines: string[] = []
    const limited = asRole()
    const app = new Elysia()
      .use(
        errorMapping({
          logger: jsonLogger('warn', (line) => lines.push(line)),
          allowedMethods: () => [],
          isUnavailable: isDatabaseUnavailable,
        }),
      )
      .get('/api/v1/things', async () => limited`select 1`)
      .get('/api/v1/broken', () => {
        throw new Error('boom')
      })
    try {
      const response = await app.handle(new Request('http://localhost/api/v1/things'))
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('5')
      const text = await response.text()
      expect(JSON.parse(text)).toMatchObject({ error: 'service_unavailable' })
      expect(text).not.toMatch(/53300|too many|dw_limited|\.ts:\d+|node_modules/i)
      expect(lines.join('\n')).toContain('dependency unavailable')

      // Anything else unexpected stays the 500.
      const broken = await app.handle(new Request('http://localhost/api/v1/broken'))
      expect(broken.status).toBe(500)
    } finally {
      await limited.end()
    }
  },
)
