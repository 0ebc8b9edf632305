import type { PgBoss } from 'pg-boss'
import type { Db } from '../../infrastructure/db/database.ts'
import { deleteExpiredCounters } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { applyRetention } from '../../infrastructure/repositories/pg-retention.ts'
import { deleteExpiredSessions } from '../../infrastructure/repositories/pg-session-store.ts'

export const RATE_LIMIT_CLEANUP = 'maintenance.rate-limit-cleanup'
export const RETENTION = 'maintenance.retention'

/** Old rate-limit windows are deleted every ten minutes; pg-boss runs a cron once across processes. */
export async function registerMaintenance(boss: PgBoss, deps: { db: Db; now: () => Date }): Promise<void> {
  await boss.schedule(RATE_LIMIT_CLEANUP, '*/10 * * * *')
  await boss.work(RATE_LIMIT_CLEANUP, async () => {
    await deleteExpiredCounters(deps.db, Math.floor(deps.now().getTime() / 1000))
    // Expired sessions and reset links are refused when used; this only keeps the tables small.
    await deleteExpiredSessions(deps.db, deps.now())
  })
  // Nightly, in small batches.
  await boss.schedule(RETENTION, '17 3 * * *')
  await boss.work(RETENTION, async () => {
    await applyRetention(deps.db)
  })
}
