import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Logger } from '../../domain/shared/logger.ts'
import type { Db } from '../../infrastructure/db/database.ts'
import { REFLATTEN_SPF } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'
import { reflattenManagedRecords } from '../../infrastructure/repositories/pg-spf-store.ts'

const BATCH = 50

/**
 * Flattened managed records hold the providers' networks as they were when planned; providers
 * change them. Hourly, every record planned more than SPF_REFLATTEN_HOURS ago is planned again,
 * and served anew only when the result changed (a new version, actor `system`).
 */
export function spfJobs(deps: {
  db: Db
  dns: DnsResolver
  now: () => Date
  logger: Logger
  zone: string
  reflattenHours: number
}): JobHandler[] {
  return [
    handle(REFLATTEN_SPF, async () => {
      let total = 0
      while (true) {
        const seen = await reflattenManagedRecords(
          { db: deps.db, dns: deps.dns, now: deps.now, zone: deps.zone },
          { olderThanHours: deps.reflattenHours, limit: BATCH },
        )
        total += seen
        if (seen < BATCH) break
      }
      if (total > 0) deps.logger.info('managed SPF records re-planned', { count: total })
    }),
  ]
}
