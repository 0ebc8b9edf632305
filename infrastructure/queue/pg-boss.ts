import { dirname } from 'node:path'
import { fromPglite, PgBoss } from 'pg-boss'
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
/**
 * node-postgres reads a Unix socket's directory from the `host` parameter. Without it, a process
 * reaching a running service's embedded database through its socket (the CLI) would hand pg-boss
 * the URL's own host, localhost:5432: another server, or none.
 */
function bossUrl(database: Extract<Database, { kind: 'postgres' }>): string {
  if (database.socketPath === undefined) return database.url
  const url = new URL(database.url)
  url.searchParams.set('host', dirname(database.socketPath))
  return url.toString()
}

export async function startBoss(database: Database, options: BossOptions): Promise<PgBoss> {
  const scheduling = { schedule: options.background, supervise: options.background }
  const boss =
    database.kind === 'pglite'
      ? new PgBoss({ db: fromPglite(database.pglite), backend: 'pglite', ...scheduling })
      : new PgBoss({
          connectionString: bossUrl(database),
          max: 4,
          application_name: 'dmarcwatch-queue',
          ...scheduling,
        })
  boss.on('error', (error: unknown) => {
    // pg-boss reports failures of its own background loops here; they retry on their own.
    console.error(JSON.stringify({ level: 'error', msg: 'pg-boss error', error: String(error) }))
  })
  await boss.start()
  return boss
}
