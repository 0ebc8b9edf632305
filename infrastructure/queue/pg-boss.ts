import { sql } from 'drizzle-orm'
import { fromDrizzle, fromPglite, PgBoss } from 'pg-boss'
import { errorFields } from '../../domain/shared/logger.ts'
import type { Database } from '../db/database.ts'

export interface BossOptions {
  /** Run maintenance and cron scheduling in this instance (workers do; the API and the CLI do not). */
  background: boolean
}

/**
 * One pg-boss over the same database as everything else. On PostgreSQL pg-boss keeps its own small
 * pool; on PGlite it shares the single embedded connection. Either way its schema is created or
 * migrated by `start()` under pg-boss's own advisory lock, so two processes may start at once.
 */
type BossDb = ReturnType<typeof fromDrizzle>

/**
 * pg-boss binds some options as a plain object to a `$n::jsonb` parameter; node-postgres and PGlite
 * serialise it, postgres.js (without a type for the parameter) does not. JSON text casts the same.
 */
function jsonObjectsAsText(db: BossDb): BossDb {
  const plain = (value: unknown) =>
    value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype
  return {
    executeSql: (text, values) =>
      db.executeSql(
        text,
        values?.map((value) => (plain(value) ? JSON.stringify(value) : value)),
      ),
  }
}

export async function startBoss(database: Database, options: BossOptions): Promise<PgBoss> {
  const scheduling = { schedule: options.background, supervise: options.background }
  const boss =
    database.kind === 'pglite'
      ? new PgBoss({ db: fromPglite(database.pglite), backend: 'pglite', ...scheduling })
      : database.socketPath !== undefined
        ? // A running service's PGlite through its socket (the CLI): the URL names no server, so
          // pg-boss goes through the client's own connection. The service created its schema.
          new PgBoss({
            db: jsonObjectsAsText(
              fromDrizzle(database.db as unknown as Parameters<typeof fromDrizzle>[0], sql),
            ),
            backend: 'pglite',
            migrate: false,
            registerInstance: false,
            ...scheduling,
          })
        : new PgBoss({
            connectionString: database.url,
            max: 4,
            application_name: 'dmarcwatch-queue',
            ...scheduling,
          })
  boss.on('error', (error: unknown) => {
    // pg-boss reports failures of its own background loops here; they retry on their own.
    console.error(JSON.stringify({ level: 'error', msg: 'pg-boss error', ...errorFields(error) }))
  })
  await boss.start()
  return boss
}
