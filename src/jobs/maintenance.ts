import type { Db } from '../../infrastructure/db/database.ts'
import { PARTITIONS, RATE_LIMIT_CLEANUP, RETENTION } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'
import { maintainPartitions } from '../../infrastructure/repositories/pg-partitions.ts'
import { deleteExpiredCounters } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { applyRetention } from '../../infrastructure/repositories/pg-retention.ts'
import { deleteExpiredSessions } from '../../infrastructure/repositories/pg-session-store.ts'

/** aggregate_records partitions exist for the current month and this many after it. */
export const PARTITION_MONTHS_AHEAD = 3

/** Old rate-limit windows are deleted every ten minutes; pg-boss runs a cron once across processes. */
export function maintenanceJobs(deps: { db: Db; now: () => Date }): JobHandler[] {
  return [
    handle(RATE_LIMIT_CLEANUP, async () => {
      await deleteExpiredCounters(deps.db, Math.floor(deps.now().getTime() / 1000))
      // Expired sessions and reset links are refused when used; this only keeps the tables small.
      await deleteExpiredSessions(deps.db, deps.now())
    }),
    // Monthly partitions of aggregate_records, created months ahead (docs/operations.md): daily, and
    // at start, so an install that was down over a month boundary is covered at once. Rows without a
    // partition are never refused (they go to the default partition), only slower to expire.
    handle(PARTITIONS, { atStart: true }, async () => {
      await maintainPartitions(deps.db, { today: deps.now(), monthsAhead: PARTITION_MONTHS_AHEAD })
    }),
    handle(RETENTION, async () => {
      await applyRetention(deps.db)
    }),
  ]
}
