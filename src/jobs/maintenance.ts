import type { PgBoss } from 'pg-boss'
import type { Db } from '../../infrastructure/db/database.ts'
import { maintainPartitions } from '../../infrastructure/repositories/pg-partitions.ts'
import { deleteExpiredCounters } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { applyRetention } from '../../infrastructure/repositories/pg-retention.ts'
import { deleteExpiredSessions } from '../../infrastructure/repositories/pg-session-store.ts'

export const RATE_LIMIT_CLEANUP = 'maintenance.rate-limit-cleanup'
export const RETENTION = 'maintenance.retention'
export const PARTITIONS = 'maintenance.partitions'

/** aggregate_records partitions exist for the current month and this many after it. */
export const PARTITION_MONTHS_AHEAD = 3

/** Old rate-limit windows are deleted every ten minutes; pg-boss runs a cron once across processes. */
export async function registerMaintenance(boss: PgBoss, deps: { db: Db; now: () => Date }): Promise<void> {
  await boss.schedule(RATE_LIMIT_CLEANUP, '*/10 * * * *')
  await boss.work(RATE_LIMIT_CLEANUP, async () => {
    await deleteExpiredCounters(deps.db, Math.floor(deps.now().getTime() / 1000))
    // Expired sessions and reset links are refused when used; this only keeps the tables small.
    await deleteExpiredSessions(deps.db, deps.now())
  })
  // Monthly partitions of aggregate_records, created months ahead (docs/operations.md): daily, so
  // a run that could not get its locks has weeks of retries before a month is needed, and at
  // start, so an install that was down over a month boundary is covered at once. Rows without a
  // partition are never refused (they go to the default partition), only slower to expire.
  await boss.schedule(PARTITIONS, '7 0 * * *')
  await boss.work(PARTITIONS, async () => {
    await maintainPartitions(deps.db, { today: deps.now(), monthsAhead: PARTITION_MONTHS_AHEAD })
  })
  await boss.send(PARTITIONS, {})
  // Nightly, in small batches, after expired months are dropped whole.
  await boss.schedule(RETENTION, '17 3 * * *')
  await boss.work(RETENTION, async () => {
    await applyRetention(deps.db)
  })
}
