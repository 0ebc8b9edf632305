import type { Database } from '../../infrastructure/db/database.ts'
import { mergeLeftoverRollups } from '../../infrastructure/repositories/aggregate-report-merge.ts'
import { pruneDeliveryLogs } from '../../infrastructure/repositories/pg-delivery-log-retention.ts'
import { buildMonthlyRollups } from '../../infrastructure/repositories/pg-monthly-rollups.ts'
import { pruneNotificationMail } from '../../infrastructure/repositories/pg-notification-mail-store.ts'
import { maintainPartitions } from '../../infrastructure/repositories/pg-partitions.ts'
import { deleteExpiredCounters } from '../../infrastructure/repositories/pg-rate-limit-counter.ts'
import { applyRetention } from '../../infrastructure/repositories/pg-retention.ts'
import { deleteExpiredSessions } from '../../infrastructure/repositories/pg-session-store.ts'
import type { Housekeeping } from '../jobs/maintenance.ts'

/** The maintenance jobs' housekeeping on the process's database. */
export function housekeeping(database: Database): Housekeeping {
  const db = database.db
  return {
    deleteExpiredCounters: (nowSeconds) => deleteExpiredCounters(db, nowSeconds),
    deleteExpiredSessions: (now) => deleteExpiredSessions(db, now),
    maintainPartitions: (input) => maintainPartitions(db, input),
    applyRetention: async () => {
      const applied = await applyRetention(db)
      await pruneNotificationMail(db)
      // The outbox and the webhook and chat delivery logs (docs/webhooks.md, "Retention").
      const deliveryLogs = await pruneDeliveryLogs(db)
      return { ...applied, deliveryLogs }
    },
    buildMonthlyRollups: async () => {
      // A large report's rollup rows still pending (its merge and that merge's job both failed)
      // are merged first, so the months are built from every stored report. One that still fails
      // stops neither the others nor the build (its month is marked stale again whenever it is
      // merged); the job fails after the build, so the failure shows and the run is retried.
      const leftovers = await mergeLeftoverRollups(database)
      const built = await buildMonthlyRollups(db)
      if (leftovers.failed.length > 0) {
        const first = leftovers.failed[0]!
        throw new Error(
          `pending rollups of ${leftovers.failed.length} report(s) could not be merged (report ${first.reportId}: ${String(first.error)})`,
        )
      }
      return built
    },
  }
}
