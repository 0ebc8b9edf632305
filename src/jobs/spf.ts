import type { Logger } from '../../domain/shared/logger.ts'
import { REFLATTEN_SPF } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

const BATCH = 50

/**
 * Flattened managed records hold the providers' networks as they were when planned; providers
 * change them. Hourly, every record planned more than SPF_REFLATTEN_HOURS ago is planned again,
 * and served anew only when the result changed (a new version, actor `system`).
 */
export function spfJobs(deps: {
  /** Re-plans up to `limit` records planned more than `olderThanHours` ago; how many it saw. */
  reflatten(input: { olderThanHours: number; limit: number }): Promise<number>
  logger: Logger
  reflattenHours: number
}): JobHandler[] {
  return [
    handle(REFLATTEN_SPF, async () => {
      let total = 0
      while (true) {
        const seen = await deps.reflatten({ olderThanHours: deps.reflattenHours, limit: BATCH })
        total += seen
        if (seen < BATCH) break
      }
      if (total > 0) deps.logger.info('managed SPF records re-planned', { count: total })
    }),
  ]
}
