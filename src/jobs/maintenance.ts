import {
  MONTHLY_ROLLUPS,
  PARTITIONS,
  RATE_LIMIT_CLEANUP,
  RETENTION,
} from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

/** aggregate_records partitions exist for the current month and this many after it. */
export const PARTITION_MONTHS_AHEAD = 3

/** The housekeeping the maintenance jobs run (src/compose/maintenance.ts builds it on the database). */
export interface Housekeeping {
  /** Rate-limit windows that ended before `nowSeconds`. */
  deleteExpiredCounters(nowSeconds: number): Promise<unknown>
  /** Expired sessions and reset links. */
  deleteExpiredSessions(now: Date): Promise<unknown>
  maintainPartitions(input: { today: Date; monthsAhead: number }): Promise<unknown>
  applyRetention(): Promise<unknown>
  /** Monthly rollups of the months that closed, or were marked stale, since the last build. */
  buildMonthlyRollups(): Promise<{ months: number }>
}

/** Old rate-limit windows are deleted every ten minutes; pg-boss runs a cron once across processes. */
export function maintenanceJobs(deps: { housekeeping: Housekeeping; now: () => Date }): JobHandler[] {
  const { housekeeping } = deps
  return [
    handle(RATE_LIMIT_CLEANUP, async () => {
      await housekeeping.deleteExpiredCounters(Math.floor(deps.now().getTime() / 1000))
      // Expired sessions and reset links are refused when used; this only keeps the tables small.
      await housekeeping.deleteExpiredSessions(deps.now())
    }),
    // Monthly partitions of aggregate_records, created months ahead (docs/operations.md): daily, and
    // at start, so an install that was down over a month boundary is covered at once. Rows without a
    // partition are never refused (they go to the default partition), only slower to expire.
    handle(PARTITIONS, { atStart: true }, async () => {
      await housekeeping.maintainPartitions({ today: deps.now(), monthsAhead: PARTITION_MONTHS_AHEAD })
    }),
    handle(RETENTION, async () => {
      await housekeeping.applyRetention()
    }),
    // The summaries read closed months from these (docs/ingestion.md "A year of history"); until a
    // month is built they read its weeks and days, so a late or failed run costs time, not figures.
    handle(MONTHLY_ROLLUPS, { atStart: true }, async () => {
      await housekeeping.buildMonthlyRollups()
    }),
  ]
}
